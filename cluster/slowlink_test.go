package cluster

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// stallingLink relays TCP between NATS clients and a nats-server,
// holding back what the server sends now and then (in order), as a
// JetStream busy creating R3 consumers answers: requests land at once,
// some answers come after the client gave up on them.
type stallingLink struct {
	ln    net.Listener
	stall time.Duration // longest hold-back
	wg    sync.WaitGroup
}

// newStallingLink listens on a loopback port relaying to target; it
// stops with the test.
func newStallingLink(t *testing.T, target string, stall time.Duration) *stallingLink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &stallingLink{ln: ln, stall: stall}
	ctx, cancel := context.WithCancel(context.Background())
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				l.relay(ctx, c, target)
			}()
		}
	}()
	t.Cleanup(func() {
		cancel()
		_ = ln.Close()
		l.wg.Wait()
	})
	return l
}

// URL is the link's address for nats.Connect.
func (l *stallingLink) URL() string { return "nats://" + l.ln.Addr().String() }

// relay copies client → server as it comes and server → client with
// hold-backs, until ctx ends or either side closes.
func (l *stallingLink) relay(ctx context.Context, client net.Conn, target string) {
	server, err := net.Dial("tcp", target)
	if err != nil {
		_ = client.Close()
		return
	}
	context.AfterFunc(ctx, func() {
		_ = client.Close()
		_ = server.Close()
	})
	defer client.Close()
	defer server.Close()
	go func() {
		_, _ = io.Copy(server, client)
		_ = server.Close()
	}()
	type chunk struct {
		b  []byte
		at time.Time
	}
	q := make(chan chunk, 1024)
	go func() {
		defer close(q)
		last := time.Now()
		for {
			buf := make([]byte, 32<<10)
			n, err := server.Read(buf)
			if n > 0 {
				at := time.Now()
				if rand.IntN(8) == 0 {
					at = at.Add(rand.N(l.stall))
				}
				// In order: a held-back answer holds back those after it.
				if at.After(last) {
					last = at
				}
				q <- chunk{buf[:n], last}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		if d := time.Until(c.at); d > 0 {
			tm := time.NewTimer(d)
			select {
			case <-ctx.Done():
				tm.Stop()
				return
			case <-tm.C:
			}
		}
		if _, err := client.Write(c.b); err != nil {
			return
		}
	}
}

// TestLeasesKeptOnSlowAnswers: one instance holding many view leases
// over a link whose answers are held back now and then for up to twice
// the time a KV operation is given (as on a 3-node cluster busy creating
// the views' R3 consumers) loses none of them: a renewal that timed out
// may have landed, and the refusal of the next one at the old revision,
// unless NATS names another holder, is no loss (before, a refusal
// followed by a slow read of the key counted as one: the instance lost
// and took again its leases in a loop).
func TestLeasesKeptOnSlowAnswers(t *testing.T) {
	url := startNATS(t)
	bucket(t, url) // created on a direct connection
	link := newStallingLink(t, url[len("nats://"):], 2*testRenew)
	nc, err := nats.Connect(link.URL(), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(t.Context(), "MVD_TEST_CLUSTER")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Join(t.Context(), Options{KV: kv, Self: Member{ID: "solo"}, TTL: testTTL, Renew: testRenew, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	views := names(128)
	c.SetWanted(KindView, views)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, "every view held", 20*time.Second, func() bool { return len(c.Held(KindView)) == len(views) })
	_, lostBefore, _ := c.Stats()
	// A stable run of several TTLs: one member, nothing to hand off.
	end := time.Now().Add(5 * testTTL)
	waitFor(t, "the run's end", 10*testTTL, func() bool { return !time.Now().Before(end) })
	_, lost, _ := c.Stats()
	if lost != lostBefore {
		t.Errorf("%d leases lost over %v of a stable run (one member, %d views)", lost-lostBefore, 5*testTTL, len(views))
	}
	if n := len(c.Held(KindView)); n != len(views) {
		t.Errorf("%d of %d views held at the end", n, len(views))
	}
}
