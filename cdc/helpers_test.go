package cdc

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
}, nil)

func testRecord(lo, hi int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, testSchema)
	defer b.Release()
	for i := lo; i < hi; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
	}
	return b.NewRecordBatch()
}

// createTable writes DIR/name.lance with rows [0, n) through mvd's writer.
func createTable(t testing.TB, dir, name string, n int64, plainRowIDs bool) string {
	t.Helper()
	root := filepath.Join(dir, name+lance.TableSuffix)
	schema, err := lance.NewSchemaFromArrow(testSchema)
	if err != nil {
		t.Fatal(err)
	}
	frags, err := datawriter.WriteFragments(vfs.OS(), root, schema, "2.2", []arrow.RecordBatch{testRecord(0, n)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := lance.Create(context.Background(), vfs.OS(), root, lance.CreateOptions{Schema: schema, Fragments: frags, PlainRowIDs: plainRowIDs}); err != nil {
		t.Fatal(err)
	}
	return root
}

// appendRows commits rows [lo, hi) and returns the new version.
func appendRows(t testing.TB, root string, lo, hi int64) uint64 {
	t.Helper()
	tbl, err := lance.Open(context.Background(), vfs.OS(), root)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tbl.Checkout(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	frags, err := datawriter.WriteFragments(vfs.OS(), root, m.Schema, m.DataFileVersion, []arrow.RecordBatch{testRecord(lo, hi)})
	if err != nil {
		t.Fatal(err)
	}
	m2, err := tbl.Commit(context.Background(), m, &lance.Commit{Fragments: frags})
	if err != nil {
		t.Fatal(err)
	}
	return m2.Version
}

// deleteRowIDs commits a delete of stable row ids and returns the version.
func deleteRowIDs(t testing.TB, root string, ids ...uint64) uint64 {
	t.Helper()
	tbl, err := lance.Open(context.Background(), vfs.OS(), root)
	if err != nil {
		t.Fatal(err)
	}
	base, err := tbl.Checkout(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tbl.Commit(context.Background(), base, &lance.Commit{DeleteRowIDs: roaring64.BitmapOf(ids...)})
	if err != nil {
		t.Fatal(err)
	}
	return m.Version
}

// collector runs a watcher and gathers its events.
type collector struct {
	t      testing.TB
	w      *Watcher
	cancel context.CancelFunc
	done   chan error

	mu     sync.Mutex
	events []Event
}

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

func startWatcher(t testing.TB, opts Options) *collector {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quietLog
	}
	w, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &collector{t: t, w: w, cancel: cancel, done: make(chan error, 1)}
	go func() { c.done <- w.Run(ctx) }()
	go func() {
		for ev := range w.Events() {
			c.mu.Lock()
			c.events = append(c.events, ev)
			c.mu.Unlock()
		}
	}()
	t.Cleanup(c.stop)
	return c
}

func (c *collector) stop() {
	c.cancel()
	if err := <-c.done; err != nil && err != context.Canceled {
		c.t.Errorf("Run: %v", err)
	}
	c.done <- nil // later stops return at once
}

func (c *collector) snapshot() []Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Event(nil), c.events...)
}

// waitFor polls until cond holds on the events so far, failing after a
// deadline (no sleeps as synchronisation: the deadline is only a bound).
func (c *collector) waitFor(what string, cond func([]Event) bool) []Event {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		evs := c.snapshot()
		if cond(evs) {
			return evs
		}
		if time.Now().After(deadline) {
			for _, ev := range evs {
				c.t.Logf("event: %v", ev)
			}
			c.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func hasEvent(kind Kind, table string, to uint64) func([]Event) bool {
	return func(evs []Event) bool {
		for _, ev := range evs {
			if ev.Kind == kind && ev.Table == table && (to == 0 || ev.To == to) {
				return true
			}
		}
		return false
	}
}

func ofTable(evs []Event, table string, kinds ...Kind) []Event {
	var out []Event
	for _, ev := range evs {
		if ev.Table != table {
			continue
		}
		for _, k := range kinds {
			if ev.Kind == k {
				out = append(out, ev)
			}
		}
	}
	return out
}

// checkContiguous asserts that a table's version events go from..to in
// steps of one, each version once, with change sets.
func checkContiguous(t testing.TB, evs []Event, from, to uint64) {
	t.Helper()
	want := from
	for _, ev := range evs {
		if ev.From != want || ev.To != want+1 {
			t.Fatalf("event %v: want %d->%d", ev, want, want+1)
		}
		if ev.Err != nil || ev.Changes == nil {
			t.Fatalf("event %v: no change set", ev)
		}
		want = ev.To
	}
	if want != to {
		t.Fatalf("versions reported up to %d, want %d", want, to)
	}
}

// syncWatcher is a watcher driven by hand (no Run): scans happen when the
// test calls them, so each step is deterministic.
func syncWatcher(t testing.TB, dir string) *Watcher {
	t.Helper()
	w, err := New(Options{Dir: dir, Mode: ModePoll, Buffer: 100000, Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *Watcher) scanNow(t testing.TB, full bool) []Event {
	t.Helper()
	w.applyRequests(nil)
	if err := w.scanAll(context.Background(), full); err != nil {
		t.Fatal(err)
	}
	var out []Event
	for {
		select {
		case ev := <-w.events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
