package daemon

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"
)

// startAdmin serves an admin server with limits lim until the test ends.
func startAdmin(t *testing.T, lim adminLimits) *adminServer {
	t.Helper()
	a, err := listenAdmin("127.0.0.1:0", newMetrics(), func() (bool, string) { return true, "" }, slog.New(slog.DiscardHandler), lim)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve() }()
	t.Cleanup(func() {
		_ = a.srv.Close()
		<-done
	})
	return a
}

// TestAdminSlowBody: a client that declares a body and sends it at a
// byte a tick is cut off once the read timeout passes (injected short
// here; 10s by default) instead of holding its connection forever.
func TestAdminSlowBody(t *testing.T) {
	lim := defaultAdminLimits
	lim.readHeader, lim.read = 300*time.Millisecond, 300*time.Millisecond
	a := startAdmin(t, lim)
	conn, err := net.Dial("tcp", a.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // the slow client: one byte every 20ms, far slower than 1000 bytes in 300ms
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := conn.Write([]byte{'x'}); err != nil {
					return
				}
			}
		}
	}()
	start := time.Now()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = io.Copy(io.Discard, conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server still holds a connection whose body trickles in after %v", time.Since(start))
	}
	t.Logf("closed after %v (%v)", time.Since(start).Round(time.Millisecond), err)
}

// TestAdminBodyLimit: a request declaring a body over the limit is
// refused at once, without the server waiting for it.
func TestAdminBodyLimit(t *testing.T) {
	a := startAdmin(t, defaultAdminLimits)
	conn, err := net.Dial("tcp", a.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n", 2<<20); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 2 MiB body: status %d, want 413", resp.StatusCode)
	}
	// Requests without a body are answered as before.
	r, err := http.Get("http://" + a.Addr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusOK {
		t.Errorf("/healthz: %d", r.StatusCode)
	}
}
