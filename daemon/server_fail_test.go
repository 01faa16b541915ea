package daemon

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/message"
)

// startServer runs a server on db with deps until the test ends.
func startServer(t *testing.T, db string, deps Deps, args ...string) *Server {
	t.Helper()
	fs := parseFlags(t, append([]string{"--db", db, "--admin-addr", "127.0.0.1:0", "--watch", "fsnotify"}, args...)...)
	cfg, err := LoadConfig(fs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if deps.Logger == nil {
		deps.Logger = quietLog
	}
	srv := NewServer(cfg, deps)
	drain, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(drain, context.Background()) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case <-srv.Started():
	case err := <-done:
		t.Fatalf("Run: %v", err)
	}
	return srv
}

// gatedRefresher is a sourceRefresher whose refreshes wait for the gate.
type gatedRefresher struct {
	*sourceRefresher
	gate chan struct{}
}

func (r *gatedRefresher) Refresh(ctx context.Context, opts RefreshOptions) (RefreshResult, error) {
	r.mu.Lock()
	r.calls++
	r.mu.Unlock()
	<-r.gate
	return r.sourceRefresher.Refresh(ctx, opts)
}

// TestServerDropDrainsOffTheLoop: dropping a view whose refresh is in
// flight does not hold up the other views' wake-ups.
func TestServerDropDrainsOffTheLoop(t *testing.T) {
	db := t.TempDir()
	src := createTable(t, db, "src")
	createTable(t, db, "v")
	createTable(t, db, "slow")
	good := &sourceRefresher{root: src}
	slow := &gatedRefresher{sourceRefresher: &sourceRefresher{root: src}, gate: make(chan struct{})}
	cat := &fakeCatalog{views: map[string]ViewSpec{}, refs: map[string]Refresher{}}
	cat.add(ViewSpec{Name: "v", Source: "src"}, good)
	cat.add(ViewSpec{Name: "slow", Source: "src"}, slow)
	defer close(slow.gate) // let the drained refresh end before the server stops
	startServer(t, db, Deps{Catalog: cat})
	waitUntil(t, "slow's refresh in flight", func() bool { n, _ := slow.state(); return n == 1 })
	waitUntil(t, "v caught up", func() bool { n, _ := good.state(); return n >= 1 })
	cat.remove("slow")
	if err := os.RemoveAll(filepath.Join(db, "slow.lance")); err != nil {
		t.Fatal(err)
	}
	v := appendRows(t, src, 3, 4)
	waitUntil(t, "v refreshed while slow drains", func() bool { _, seen := good.state(); return seen == v })
}

// recordBus is a Bus that keeps what is published (the daemon's side of
// the bus; the NATS side is tested in daemon/wire over a real server).
// With failFeed it is a FeedBus whose feeds cannot be created.
type recordBus struct {
	mu       sync.Mutex
	notes    []message.Notification
	failFeed bool
}

func (b *recordBus) Start(context.Context) (string, string, error) {
	return "nats://127.0.0.1:1", "t", nil
}
func (b *recordBus) PublishChange(context.Context, *message.ChangeSet) error { return nil }
func (b *recordBus) Close() error                                            { return nil }
func (b *recordBus) PublishRefreshed(_ context.Context, n *message.Notification) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.notes = append(b.notes, *n)
	return nil
}

func (b *recordBus) of(view string) []message.Notification {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []message.Notification
	for _, n := range b.notes {
		if n.View == view {
			out = append(out, n)
		}
	}
	return out
}

// feedlessBus is a recordBus that is a FeedBus whose feeds never open.
type feedlessBus struct{ *recordBus }

func (feedlessBus) ViewFeed(context.Context, string, string) (Feed, error) {
	return nil, errors.New("nats: no responders available for request")
}
func (feedlessBus) DeleteViewFeed(context.Context, string) error { return nil }

// TestServerNotifiesFailuresOnce: a view failing the same way is notified
// once, with where the view is, not once per retry; the failure history
// still records every attempt.
func TestServerNotifiesFailuresOnce(t *testing.T) {
	db := t.TempDir()
	src := createTable(t, db, "src")
	createTable(t, db, "bad")
	failing := &sourceRefresher{root: src, fail: true}
	cat := &fakeCatalog{views: map[string]ViewSpec{}, refs: map[string]Refresher{}}
	cat.add(ViewSpec{Name: "bad", Source: "src"}, failing)
	bus := &recordBus{}
	hist := &historyLog{}
	startServer(t, db, Deps{Catalog: cat, Bus: bus, History: hist})
	waitUntil(t, "four failed attempts", func() bool { _, failed := hist.of("bad"); return failed >= 4 })
	notes := bus.of("bad")
	if len(notes) != 1 || notes[0].Error == "" || notes[0].Retries != 0 {
		t.Fatalf("notifications %+v: want one failure, the first attempt's", notes)
	}
}

// TestServerStartFailures: a view that cannot be opened is left out (and
// opened at the next look), one whose feed cannot be created refreshes
// from the watcher's wake-ups, history that cannot be written is logged
// and the refreshes go on, and an invalid policy is treated as manual.
func TestServerStartFailures(t *testing.T) {
	db := t.TempDir()
	src := createTable(t, db, "src")
	for _, n := range []string{"v", "shut", "odd"} {
		createTable(t, db, n)
	}
	good := &sourceRefresher{root: src}
	odd := &sourceRefresher{root: src}
	cat := &fakeCatalog{views: map[string]ViewSpec{}, refs: map[string]Refresher{}, failOpen: map[string]bool{"shut": true}}
	cat.add(ViewSpec{Name: "v", Source: "src"}, good)
	cat.add(ViewSpec{Name: "shut", Source: "src"}, &sourceRefresher{root: src})
	cat.add(ViewSpec{Name: "odd", Source: "src", Policy: matview.Policy{Mode: matview.Interval}}, odd) // interval without one
	hist := &failingHistory{}
	srv := startServer(t, db, Deps{Catalog: cat, Bus: feedlessBus{&recordBus{}}, History: hist})
	waitUntil(t, "ready", func() bool { ok, _ := srv.Ready(); return ok })
	srv.mu.Lock()
	_, shutServed := srv.owners["shut"]
	oddPolicy := srv.owners["odd"].owner.Policy()
	srv.mu.Unlock()
	if shutServed || cat.openCount("shut") != 1 {
		t.Errorf("a view that cannot be opened: served %v, opened %d times", shutServed, cat.openCount("shut"))
	}
	if oddPolicy.Mode != matview.Manual {
		t.Errorf("invalid policy served as %v, want manual", oddPolicy.Mode)
	}
	v := appendRows(t, src, 3, 4)
	waitUntil(t, "v refreshed without its feed", func() bool { _, seen := good.state(); return seen == v })
	waitUntil(t, "history tried", func() bool { return hist.tries() >= 2 })
	if n, _ := odd.state(); n != 0 {
		t.Errorf("the view with an invalid policy refreshed %d times", n)
	}
	cat.mu.Lock()
	delete(cat.failOpen, "shut")
	cat.mu.Unlock()
	createTable(t, db, "late") // any view appearing makes the server look again
	waitUntil(t, "shut opened at the next look", func() bool { return cat.openCount("shut") == 2 })
}

// failingHistory cannot record anything.
type failingHistory struct {
	mu sync.Mutex
	n  int
}

func (h *failingHistory) RecordRefreshes(_ context.Context, rs []HistoryRecord) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n += len(rs)
	return errors.New("badger: no space left on device")
}

func (h *failingHistory) WriteHistory(context.Context, io.Writer, string, int) error {
	return errors.New("badger: no space left on device")
}

func (h *failingHistory) tries() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

// TestServerCreateGrace: a view created by another writer and not yet
// refreshed is left to its creator for the grace period; the others are
// refreshed as usual.
func TestServerCreateGrace(t *testing.T) {
	db := t.TempDir()
	src := createTable(t, db, "src")
	createTable(t, db, "v")
	createTable(t, db, "fresh")
	good := &sourceRefresher{root: src}
	fresh := &sourceRefresher{root: src}
	cat := &fakeCatalog{views: map[string]ViewSpec{}, refs: map[string]Refresher{}}
	cat.add(ViewSpec{Name: "v", Source: "src"}, good)
	cat.add(ViewSpec{Name: "fresh", Source: "src", Unrefreshed: true, CommittedAt: time.Now()}, fresh)
	startServer(t, db, Deps{Catalog: cat}, "--create-grace", "1h")
	v := appendRows(t, src, 3, 4)
	waitUntil(t, "v refreshed", func() bool { _, seen := good.state(); return seen == v })
	if n, _ := fresh.state(); n != 0 {
		t.Errorf("a view in its creator's grace period refreshed %d times", n)
	}
}
