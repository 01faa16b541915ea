package subscribe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mvd-project/mvd/serveinfo"
	"github.com/mvd-project/mvd/stream"
)

// lockedBuffer is a bytes.Buffer for one writer goroutine and a poller.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := strings.TrimSuffix(l.b.String(), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// fakeDaemon is what a running mvd serve looks like to subscribe: the
// state directory's lock held, serve.json, an embedded NATS server with
// the refresh stream, and a publisher.
type fakeDaemon struct {
	srv *stream.Server
	pub *stream.Conn
}

func startFake(t *testing.T, state string) *fakeDaemon {
	t.Helper()
	f := startFakeQuiet(t, state)
	f.announce(t, state)
	return f
}

// startFakeQuiet starts the server without writing serve.json yet.
func startFakeQuiet(t *testing.T, state string) *fakeDaemon {
	t.Helper()
	ctx := context.Background()
	srv, err := stream.StartServer(ctx, stream.ServerConfig{StoreDir: filepath.Join(state, "nats")})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := stream.Connect(ctx, srv.ConnectOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	return &fakeDaemon{srv: srv, pub: pub}
}

func (f *fakeDaemon) announce(t *testing.T, state string) {
	t.Helper()
	if err := serveinfo.Write(state, serveinfo.Info{NATSURL: f.srv.URL(), Token: f.srv.Token(), PID: os.Getpid(), StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
}

func (f *fakeDaemon) stop(t *testing.T, state string) {
	t.Helper()
	f.pub.Close()
	if err := f.srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := serveinfo.Remove(state); err != nil {
		t.Fatal(err)
	}
}

func (f *fakeDaemon) publish(t *testing.T, view string, sv uint64) {
	t.Helper()
	err := f.pub.PublishRefresh(context.Background(), &stream.RefreshNotification{
		View: view, Source: "events", Mode: stream.ModeIncremental, RowsWritten: 1,
		SourceVersion: sv, Version: sv, LagMS: 1.5, CommittedAt: time.Now(),
	})
	if err != nil {
		t.Fatal(err)
	}
}

func waitLines(t *testing.T, out *lockedBuffer, n int) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if l := out.lines(); len(l) >= n {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("want %d lines, have %q", n, out.lines())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestRunFollowsDaemon: the first line once subscribed, one line per
// notification of the views asked for, and across a daemon restart on
// another port and token the subscriber finds the new serve.json,
// reconnects and prints what was published while it was away, once.
func TestRunFollowsDaemon(t *testing.T) {
	db := t.TempDir()
	state := filepath.Join(db, ".mvd")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	lock, err := serveinfo.AcquireLock(state)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	f := startFake(t, state)

	var out, status lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{DB: db, Views: []string{"a", "b"}, JSON: true, Out: &out, Status: &status, Poll: 20 * time.Millisecond})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	if first := waitLines(t, &out, 1)[0]; first != `{"subscribed":["a","b"],"all_views":false}` {
		t.Fatalf("first line %s", first)
	}
	f.publish(t, "a", 1)
	f.publish(t, "other", 1)
	f.publish(t, "b", 1)
	lines := waitLines(t, &out, 3)

	f.stop(t, state)
	waitStatus(t, &status, "lost mvd serve")
	f = startFakeQuiet(t, state) // a new port and token
	defer f.stop(t, state)
	f.publish(t, "a", 2) // published before the subscriber can be back
	f.announce(t, state)
	waitStatus(t, &status, "reconnected to mvd serve")
	f.publish(t, "b", 2)
	// The stream keeps order across views: once the marker b@3 is
	// printed, everything before it is too (a repeated line included).
	f.publish(t, "b", 3)
	for {
		lines = waitLines(t, &out, len(lines)+1)
		if strings.Contains(lines[len(lines)-1], `"source_version":3`) {
			break
		}
	}
	var got []string
	for _, l := range lines[1:] {
		var n struct {
			View          string `json:"view"`
			SourceVersion uint64 `json:"source_version"`
		}
		if err := json.Unmarshal([]byte(l), &n); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		got = append(got, n.View+"@"+strconv.FormatUint(n.SourceVersion, 10))
	}
	if want := "a@1 b@1 a@2 b@2 b@3"; strings.Join(got, " ") != want {
		t.Fatalf("notifications %v, want %s; status:\n%s", got, want, strings.Join(status.lines(), "\n"))
	}
}

func waitStatus(t *testing.T, status *lockedBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(strings.Join(status.lines(), "\n"), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no status line %q in %q", want, status.lines())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestRunNoDaemon: no serve.json, or one left by a daemon that is gone.
func TestRunNoDaemon(t *testing.T) {
	db := t.TempDir()
	err := Run(context.Background(), Options{DB: db, Out: &bytes.Buffer{}})
	if !errors.Is(err, ErrNoDaemon) || !strings.Contains(err.Error(), "serve.json not found") {
		t.Fatalf("no daemon: %v", err)
	}
	state := filepath.Join(db, ".mvd")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := serveinfo.Write(state, serveinfo.Info{NATSURL: "nats://127.0.0.1:1", PID: 1}); err != nil {
		t.Fatal(err)
	}
	err = Run(context.Background(), Options{DB: db, Out: &bytes.Buffer{}})
	if !errors.Is(err, ErrNoDaemon) || !strings.Contains(err.Error(), "stale") {
		t.Fatalf("stale serve.json: %v", err)
	}
	// A serve.json that is not JSON is said to be so, not "not found".
	if err := os.WriteFile(filepath.Join(state, serveinfo.File), []byte("garbage\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = Run(context.Background(), Options{DB: db, Out: &bytes.Buffer{}})
	if !errors.Is(err, ErrNoDaemon) || !strings.Contains(err.Error(), "serve.json is unreadable or corrupt: ") || strings.Contains(err.Error(), "not found") {
		t.Fatalf("garbage serve.json: %v", err)
	}
	// A database directory that does not exist is said to be missing.
	missing := filepath.Join(db, "nope")
	err = Run(context.Background(), Options{DB: missing, Out: &bytes.Buffer{}})
	if err == nil || errors.Is(err, ErrNoDaemon) || err.Error() != "database directory "+missing+" does not exist" {
		t.Fatalf("missing --db: %v", err)
	}
	// --wait waits until the context ends, then succeeds quietly.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := Run(ctx, Options{DB: db, Wait: true, Out: &bytes.Buffer{}, Poll: 10 * time.Millisecond}); err != nil {
		t.Fatalf("--wait: %v", err)
	}
}

// TestRunNATSURLPrefix (issue 23): with --nats-url (a comma-separated
// list) and no --db, --json prints {"subscribed":[],"all_views":true}
// first, then every notification of the database whose subject prefix
// is given, and none of another database on the same server.
func TestRunNATSURLPrefix(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := stream.StartServer(ctx, stream.ServerConfig{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	pubs := map[string]*stream.Conn{}
	for _, p := range []string{"mvd", "shop-1"} {
		o := srv.ConnectOptions()
		o.Subjects = stream.Subjects{Prefix: p}
		// Two databases' streams share the server's store.
		o.Streams.MaxBytes, o.Streams.RefreshMaxBytes = 8<<20, 8<<20
		c, err := stream.Connect(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.EnsureStreams(ctx); err != nil {
			t.Fatal(err)
		}
		pubs[p] = c
	}
	u := "nats://" + srv.Token() + "@" + strings.TrimPrefix(srv.URL(), "nats://")
	out := &lockedBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{NATSURL: u + "," + u, SubjectPrefix: "shop-1", JSON: true, Out: out})
	}()
	if l := waitLines(t, out, 1); l[0] != `{"subscribed":[],"all_views":true}` {
		t.Fatalf("first line %q", l[0])
	}
	for p, view := range map[string]string{"mvd": "other", "shop-1": "v"} {
		err := pubs[p].PublishRefresh(ctx, &stream.RefreshNotification{View: view, Source: "events", Mode: stream.ModeIncremental,
			RowsWritten: 1, SourceVersion: 3, Version: 2, CommittedAt: time.Now(), Instance: "node-1"})
		if err != nil {
			t.Fatal(err)
		}
	}
	l := waitLines(t, out, 2)
	n, err := stream.DecodeRefresh([]byte(l[1]))
	if err != nil || n.View != "v" || n.Instance != "node-1" {
		t.Fatalf("second line %q (%v): want view v's notification", l[1], err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if l := out.lines(); len(l) != 2 {
		t.Fatalf("lines %q: another database's notification was printed", l)
	}
}
