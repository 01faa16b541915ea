package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mvd-project/mvd/control/httpapi"
)

// TestAdminTokenConfig: a loopback admin address needs no token; any
// other refuses to load without one, and takes one from
// --admin-token-file (which wins) or MVD_ADMIN_TOKEN.
func TestAdminTokenConfig(t *testing.T) {
	db := t.TempDir()
	tokFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokFile, []byte("s3cret-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		env     []string
		token   string
		refused string
	}{
		{args: []string{"--admin-addr", "127.0.0.1:0"}},
		{args: []string{"--admin-addr", "localhost:0"}},
		{args: []string{"--admin-addr", "[::1]:0"}},
		{args: []string{"--admin-addr", "0.0.0.0:7480"}, refused: "not a loopback address"},
		{args: []string{"--admin-addr", ":7480"}, refused: "not a loopback address"},
		{args: []string{"--admin-addr", "example.com:7480"}, refused: "not a loopback address"},
		{args: []string{"--admin-addr", "0.0.0.0:7480"}, env: []string{"MVD_ADMIN_TOKEN=s3cret-env"}, token: "s3cret-env"},
		{args: []string{"--admin-addr", "0.0.0.0:7480", "--admin-token-file", tokFile}, env: []string{"MVD_ADMIN_TOKEN=s3cret-env"}, token: "s3cret-from-file"},
		{args: []string{"--admin-addr", "127.0.0.1:0"}, env: []string{"MVD_ADMIN_TOKEN=loop"}, token: "loop"},
		{args: []string{"--admin-addr", "0.0.0.0:7480", "--admin-token-file", empty}, refused: "is empty"},
		{args: []string{"--admin-addr", "0.0.0.0:7480", "--admin-token-file", filepath.Join(db, "nope")}, refused: "admin-token-file"},
	} {
		c, err := LoadConfig(parseFlags(t, append([]string{"--db", db}, tc.args...)...), tc.env)
		if tc.refused != "" {
			if err == nil || !strings.Contains(err.Error(), tc.refused) {
				t.Errorf("%v %v: %v, want refused with %q", tc.args, tc.env, err, tc.refused)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v %v: %v", tc.args, tc.env, err)
			continue
		}
		if c.AdminToken != tc.token {
			t.Errorf("%v %v: token %q, want %q", tc.args, tc.env, c.AdminToken, tc.token)
		}
		var out bytes.Buffer
		_ = json.NewEncoder(&out).Encode(c)
		if tc.token != "" && strings.Contains(out.String(), tc.token) {
			t.Errorf("--check-config would print the token: %s", out.String())
		}
	}
}

// TestAdminNonLoopbackRefusesToStart: mvd serve bound to every interface
// without a token exits with the reason before it takes a lock, listens
// or writes serve.json.
func TestAdminNonLoopbackRefusesToStart(t *testing.T) {
	db := t.TempDir()
	fs := parseFlags(t, "--db", db, "--admin-addr", "0.0.0.0:0")
	var stdout, stderr bytes.Buffer
	err := Command(fs, nil, &stdout, &stderr, nil)
	if err == nil || !strings.Contains(err.Error(), "not a loopback address") || !strings.Contains(err.Error(), "MVD_ADMIN_TOKEN") {
		t.Fatalf("serve on 0.0.0.0 without a token: %v", err)
	}
	if _, err := os.Stat(filepath.Join(db, ".mvd")); !os.IsNotExist(err) {
		t.Errorf("a refused start left %s/.mvd behind: %v", db, err)
	}
}

// TestAdminToken: with a token, a request without it or with a wrong
// one is answered 401 with a JSON error and reaches no route (nothing
// changes); with it, the route runs. /healthz is guarded too.
func TestAdminToken(t *testing.T) {
	var changed atomic.Int64
	lim := defaultAdminLimits
	lim.token = "right-token"
	a, err := listenAdmin("127.0.0.1:0", newMetrics(), func() (bool, string) { return true, "" }, slog.New(slog.DiscardHandler), lim,
		route{Pattern: "POST /v1/change", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			changed.Add(1)
			w.WriteHeader(http.StatusNoContent)
		})})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve() }()
	t.Cleanup(func() {
		_ = a.srv.Close()
		<-done
	})
	send := func(path, auth string) (int, string) {
		t.Helper()
		method, body := http.MethodPost, io.Reader(strings.NewReader("{}"))
		if path == "/healthz" {
			method, body = http.MethodGet, nil
		}
		req, _ := http.NewRequestWithContext(context.Background(), method, "http://"+a.Addr()+path, body)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, auth := range []string{"", "Bearer wrong-token", "Bearer right-toke", "Bearer right-tokenX", "Basic right-token", "right-token"} {
		for _, path := range []string{"/v1/change", "/healthz"} {
			status, body := send(path, auth)
			var e struct {
				Error string `json:"error"`
				Code  int    `json:"code"`
			}
			if status != http.StatusUnauthorized || json.Unmarshal([]byte(body), &e) != nil || e.Code != 1 || !strings.Contains(e.Error, "bearer token") {
				t.Errorf("%s with %q: %d %s, want 401 and a JSON error", path, auth, status, body)
			}
		}
	}
	if n := changed.Load(); n != 0 {
		t.Fatalf("unauthenticated requests reached the route %d times", n)
	}
	if status, body := send("/v1/change", "Bearer right-token"); status != http.StatusNoContent || changed.Load() != 1 {
		t.Fatalf("with the token: %d %s", status, body)
	}
	if status, _ := send("/healthz", "Bearer right-token"); status != http.StatusOK {
		t.Fatalf("/healthz with the token: %d", status)
	}
}

// TestAdminLongAnswer: a route that waits for a refresh (POST /v1/sql)
// extends its write deadline (httpapi.ExtendWrite) and is answered after
// the server's write timeout has passed; one that does not is cut off.
func TestAdminLongAnswer(t *testing.T) {
	lim := defaultAdminLimits
	lim.write = 200 * time.Millisecond
	release := make(chan struct{})
	slow := func(extend bool) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if extend {
				httpapi.ExtendWrite(w)
			}
			<-release
			httpapi.WriteJSON(w, http.StatusOK, map[string]string{"mode": "rebuild"})
		})
	}
	a, err := listenAdmin("127.0.0.1:0", newMetrics(), func() (bool, string) { return true, "" }, slog.New(slog.DiscardHandler), lim,
		route{Pattern: "POST /v1/long", Handler: slow(true)}, route{Pattern: "POST /v1/cut", Handler: slow(false)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve() }()
	t.Cleanup(func() {
		_ = a.srv.Close()
		<-done
	})
	// The refresh the routes stand for takes four write timeouts.
	timer := time.AfterFunc(4*lim.write, func() { close(release) })
	defer timer.Stop()
	type answer struct {
		status int
		err    error
	}
	ask := func(path string) <-chan answer {
		ch := make(chan answer, 1)
		go func() {
			resp, err := http.Post("http://"+a.Addr()+path, "application/json", nil)
			if err != nil {
				ch <- answer{err: err}
				return
			}
			defer resp.Body.Close()
			_, err = io.ReadAll(resp.Body)
			ch <- answer{resp.StatusCode, err}
		}()
		return ch
	}
	long, cut := ask("/v1/long"), ask("/v1/cut")
	if r := <-long; r.err != nil || r.status != http.StatusOK {
		t.Errorf("a route that extends its deadline: %d %v, want 200", r.status, r.err)
	}
	if r := <-cut; r.err == nil {
		t.Errorf("a route past the write timeout was answered (%d): the timeout does not apply", r.status)
	}
}
