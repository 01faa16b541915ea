package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/serveinfo"
	"github.com/mvd-project/mvd/vfs"
)

var testSchema = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)

func testRecord(lo, hi int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, testSchema)
	defer b.Release()
	for i := lo; i < hi; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
	}
	return b.NewRecordBatch()
}

func createTable(t *testing.T, dir, name string) string {
	t.Helper()
	root := filepath.Join(dir, name+".lance")
	schema, err := lance.NewSchemaFromArrow(testSchema)
	if err != nil {
		t.Fatal(err)
	}
	frags, err := datawriter.WriteFragments(vfs.OS(), root, schema, "2.2", []arrow.RecordBatch{testRecord(0, 3)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := lance.Create(context.Background(), vfs.OS(), root, lance.CreateOptions{Schema: schema, Fragments: frags}); err != nil {
		t.Fatal(err)
	}
	return root
}

// setMetadata commits a schema-metadata change (what an alter of a
// view's policy does).
func setMetadata(t *testing.T, root string, md map[string]string) {
	t.Helper()
	ctx := context.Background()
	tbl, err := lance.Open(ctx, vfs.OS(), root)
	if err != nil {
		t.Fatal(err)
	}
	base := must(tbl.Checkout(ctx, 0))
	if _, err := tbl.Commit(ctx, base, &lance.Commit{SchemaMetadata: md}); err != nil {
		t.Fatal(err)
	}
}

func appendRows(t *testing.T, root string, lo, hi int64) uint64 {
	t.Helper()
	ctx := context.Background()
	tbl, err := lance.Open(ctx, vfs.OS(), root)
	if err != nil {
		t.Fatal(err)
	}
	base := must(tbl.Checkout(ctx, 0))
	frags, err := datawriter.WriteFragments(vfs.OS(), root, base.Schema, "2.2", []arrow.RecordBatch{testRecord(lo, hi)})
	if err != nil {
		t.Fatal(err)
	}
	m, err := tbl.Commit(ctx, base, &lance.Commit{Fragments: frags})
	if err != nil {
		t.Fatal(err)
	}
	return m.Version
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// sourceRefresher reflects its source's latest version, read from the real
// table: a stand-in for matview in tests of the daemon's wiring.
type sourceRefresher struct {
	root string
	fail bool

	mu    sync.Mutex
	calls int
	seen  uint64
}

func (r *sourceRefresher) Refresh(ctx context.Context, opts RefreshOptions) (RefreshResult, error) {
	r.mu.Lock()
	r.calls++
	r.mu.Unlock()
	if r.fail {
		return RefreshResult{}, errors.New("source lost a column the view reads")
	}
	tbl, err := lance.Open(ctx, vfs.OS(), r.root)
	if err != nil {
		return RefreshResult{}, err
	}
	m, err := tbl.Checkout(ctx, 0)
	if err != nil {
		return RefreshResult{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	mode := "incremental"
	if m.Version == r.seen {
		mode = "no_op"
	}
	r.seen = m.Version
	// It commits nothing to the view, so its "view version" must not be
	// one the view table really has (the server skips its own commits).
	return RefreshResult{Mode: mode, RowsWritten: 1, SourceVersion: m.Version, Version: 1<<40 + uint64(r.calls), SourceCommittedAt: m.Timestamp, CommittedAt: time.Now()}, nil
}

func (r *sourceRefresher) state() (int, uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls, r.seen
}

// fakeCatalog lists views from a map the test edits.
type fakeCatalog struct {
	mu    sync.Mutex
	views map[string]ViewSpec
	refs  map[string]Refresher
	opens map[string]int
	// failOpen names views whose Open fails.
	failOpen map[string]bool
}

func (c *fakeCatalog) Views(ctx context.Context) ([]ViewSpec, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []ViewSpec
	for _, v := range c.views {
		out = append(out, v)
	}
	return out, nil
}

func (c *fakeCatalog) View(ctx context.Context, name string) (ViewSpec, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.views[name]
	return v, ok, nil
}

func (c *fakeCatalog) Open(ctx context.Context, name string) (Refresher, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.opens == nil {
		c.opens = map[string]int{}
	}
	c.opens[name]++
	if c.failOpen[name] {
		return nil, fmt.Errorf("open view %s: read manifest: i/o error", name)
	}
	return c.refs[name], nil
}

func (c *fakeCatalog) add(spec ViewSpec, r Refresher) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.views[spec.Name], c.refs[spec.Name] = spec, r
}

func (c *fakeCatalog) openCount(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opens[name]
}

func (c *fakeCatalog) remove(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.views, name)
}

// historyLog keeps the outcomes the server records.
type historyLog struct {
	mu   sync.Mutex
	outs []Outcome
}

func (h *historyLog) RecordRefreshes(ctx context.Context, rs []HistoryRecord) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range rs {
		if r.Source != "src" || r.SourceIncarnation == "" {
			return fmt.Errorf("record of %s without its source: %+v", r.View, r)
		}
		h.outs = append(h.outs, r.Outcome)
	}
	return nil
}

func (h *historyLog) WriteHistory(ctx context.Context, w io.Writer, view string, limit int) error {
	ok, failed := h.of(view)
	_, err := fmt.Fprintf(w, `[{"ok":%d,"failed":%d}]`, ok, failed)
	return err
}

func (h *historyLog) of(view string) (ok, failed int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, o := range h.outs {
		if o.View == view {
			if o.Err != nil {
				failed++
			} else {
				ok++
			}
		}
	}
	return ok, failed
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServer runs the serve process's wiring on a real database with
// stand-in views: start-up (lock, serve.json, admin), readiness, wake-ups
// from real commits, a failing view that does not stop the other, views
// appearing and disappearing, a refused second server, and a clean drain.
func TestServer(t *testing.T) {
	db := t.TempDir()
	src := createTable(t, db, "src")
	createTable(t, db, "v")
	createTable(t, db, "bad")
	good := &sourceRefresher{root: src}
	failing := &sourceRefresher{root: src, fail: true}
	cat := &fakeCatalog{views: map[string]ViewSpec{}, refs: map[string]Refresher{}}
	cat.add(ViewSpec{Name: "v", Source: "src", Policy: matview.Policy{FreshnessTarget: time.Nanosecond}}, good)
	cat.add(ViewSpec{Name: "bad", Source: "src"}, failing)

	fs := parseFlags(t, "--db", db, "--admin-addr", "127.0.0.1:0", "--watch", "fsnotify")
	cfg, err := LoadConfig(fs, nil)
	if err != nil {
		t.Fatal(err)
	}
	hist := &historyLog{}
	srv := NewServer(cfg, Deps{Catalog: cat, Logger: quietLog, History: hist})
	drain, stopDrain := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(drain, context.Background()) }()
	defer func() { stopDrain(); <-done }()
	select {
	case <-srv.Started():
	case err := <-done:
		t.Fatalf("Run: %v", err)
	}
	info := srv.Info()
	st, err := os.Stat(filepath.Join(db, ".mvd", serveinfo.File))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("serve.json: %v %v", st, err)
	}
	if onDisk, err := serveinfo.Read(filepath.Join(db, ".mvd")); err != nil || onDisk.PID != os.Getpid() || onDisk.AdminAddr != info.AdminAddr {
		t.Fatalf("serve.json says %+v (%v)", onDisk, err)
	}
	base := "http://" + info.AdminAddr
	if code, body := get(t, base+"/healthz"); code != 200 || strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	waitUntil(t, "ready", func() bool { code, _ := get(t, base+"/readyz"); return code == 200 })

	// A second server on the same database refuses to start.
	second := NewServer(cfg, Deps{Logger: quietLog})
	if err := second.Run(context.Background(), context.Background()); !errors.Is(err, serveinfo.ErrLocked) {
		t.Errorf("second server: %v", err)
	}

	v := appendRows(t, src, 3, 5)
	waitUntil(t, "view v reflects the commit", func() bool { _, seen := good.state(); return seen == v })
	waitUntil(t, "failing view retried", func() bool { n, _ := failing.state(); return n >= 2 })
	waitUntil(t, "v's refreshes recorded", func() bool { ok, _ := hist.of("v"); return ok >= 2 })
	if _, failed := hist.of("v"); failed != 0 {
		t.Errorf("history of v: %d failed", failed)
	}
	waitUntil(t, "failures recorded", func() bool { _, failed := hist.of("bad"); return failed >= 2 })
	if ok, _ := hist.of("bad"); ok != 0 {
		t.Errorf("history of bad: %d ok", ok)
	}
	var metrics string
	waitUntil(t, "metrics", func() bool {
		_, metrics = get(t, base+"/metrics")
		return strings.Contains(metrics, fmt.Sprintf(`mvd_view_source_version{source="src",view="v"} %d`, v)) &&
			strings.Contains(metrics, fmt.Sprintf(`mvd_source_version{source="src"} %d`, v))
	})
	for _, want := range []string{
		`mvd_view_lag_seconds{source="src",view="v"}`,
		`mvd_refresh_duration_seconds_bucket{mode="incremental",source="src",view="v"`,
		`mvd_refresh_rows_total{source="src",view="v"}`,
		`mvd_refresh_errors_total{source="src",view="bad"}`,
		`mvd_changeset_rows_total{kind="inserted",source="src"} 2`,
		`mvd_view_freshness_target_missed{source="src",view="v"}`,
		`go_goroutines`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// Altering a view's policy is a metadata commit to the view: picked
	// up. (A commit that only adds rows is a refresh, not looked at.)
	cat.add(ViewSpec{Name: "v", Source: "src", Policy: matview.Policy{Mode: matview.Manual}}, good)
	setMetadata(t, filepath.Join(db, "v.lance"), map[string]string{"mv.auto_refresh": "manual"})
	waitUntil(t, "policy change applied", func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		h := srv.owners["v"]
		return h != nil && h.owner.Policy().Mode == matview.Manual
	})

	// A view created while serving is picked up; a dropped one stops.
	late := &sourceRefresher{root: src}
	cat.add(ViewSpec{Name: "late", Source: "src"}, late)
	createTable(t, db, "late")
	waitUntil(t, "late view refreshed", func() bool { n, _ := late.state(); return n >= 1 })
	cat.remove("bad")
	if err := os.RemoveAll(filepath.Join(db, "bad.lance")); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "bad view stopped", func() bool {
		_, m := get(t, base+"/metrics")
		return !strings.Contains(m, `view="bad"`)
	})
	n, _ := failing.state()
	v = appendRows(t, src, 5, 6)
	waitUntil(t, "late view reflects", func() bool { _, seen := late.state(); return seen == v })
	if n2, _ := failing.state(); n2 > n+1 { // at most one retry already in flight
		t.Errorf("dropped view still refreshed: %d -> %d calls", n, n2)
	}

	// A view dropped and created again is opened again.
	if err := os.RemoveAll(filepath.Join(db, "late.lance")); err != nil {
		t.Fatal(err)
	}
	createTable(t, db, "late")
	waitUntil(t, "recreated view reopened", func() bool { return cat.openCount("late") == 2 })

	stopDrain()
	if err := <-done; err != nil {
		t.Fatalf("Run after drain: %v", err)
	}
	done <- nil
	if _, err := os.Stat(filepath.Join(db, ".mvd", serveinfo.File)); !os.IsNotExist(err) {
		t.Errorf("serve.json after a clean exit: %v", err)
	}
	l, err := serveinfo.AcquireLock(filepath.Join(db, ".mvd"))
	if err != nil {
		t.Fatalf("lock after exit: %v", err)
	}
	l.Release()
}
