package bench

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/spf13/pflag"

	"github.com/mvd-project/mvd/arrowjson"
	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/daemon/wire"
	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/stream"
	"github.com/mvd-project/mvd/vfs"
)

// The soak: the in-process daemon (the same wiring as `mvd serve`: cdc
// watcher, embedded NATS, Badger, matview refreshers) keeps two views over
// a retention table LanceDB writes (see runSoak); each step waits for both
// views' notifications, so the refresh count is exact. RSS and goroutines
// are sampled every step; after warm-up the median of the last quarter of
// the samples must stay within a tolerance of the first quarter's. That is
// a leak check, not a timing assertion.

// soakSchema is the source of the soak: one int, one string, one float.
var soakSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "kind", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

func soakRows(lo, hi int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, soakSchema)
	defer b.Release()
	for i := lo; i < hi; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("k%d", i%8))
		b.Field(2).(*array.Float64Builder).Append(float64(i % 100))
	}
	return b.NewRecordBatch()
}

// goWriter appends rows to a source table with mvd's own writer.
type goWriter struct {
	t    *lance.Table
	next int64
}

func newGoWriter(tb testing.TB, dir, name string, rows int64) *goWriter {
	tb.Helper()
	ls, err := lance.NewSchemaFromArrow(soakSchema)
	if err != nil {
		tb.Fatal(err)
	}
	root := filepath.Join(dir, name+".lance")
	rec := soakRows(0, rows)
	defer rec.Release()
	frags, err := datawriter.WriteFragments(vfs.OS(), root, ls, "2.2", []arrow.RecordBatch{rec})
	if err != nil {
		tb.Fatal(err)
	}
	tbl, _, err := lance.Create(context.Background(), vfs.OS(), root, lance.CreateOptions{Schema: ls, Fragments: frags})
	if err != nil {
		tb.Fatal(err)
	}
	return &goWriter{t: tbl, next: rows}
}

// appendOne commits one row and returns the new version.
func (w *goWriter) appendOne(ctx context.Context) (uint64, error) {
	m, err := w.t.Latest(ctx)
	if err != nil {
		return 0, err
	}
	rec := soakRows(w.next, w.next+1)
	defer rec.Release()
	frags, err := datawriter.WriteFragments(w.t.FS(), w.t.Root(), m.Schema, m.DataFileVersion, []arrow.RecordBatch{rec})
	if err != nil {
		return 0, err
	}
	s, err := w.t.Commit(ctx, m, &lance.Commit{Fragments: frags})
	if err != nil {
		return 0, err
	}
	w.next++
	return s.Version, nil
}

// createViews creates, through matview, "all_rows" (every row) and
// "filtered" (amount >= 50: half of them) over source.
func createViews(tb testing.TB, dir, source string) {
	tb.Helper()
	ctx := context.Background()
	db, err := matview.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	all, err := plan.ParseSelect("id, kind, amount")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := db.CreateView(ctx, "all_rows", source, matview.Definition{Select: all}); err != nil {
		tb.Fatal(err)
	}
	sel, err := plan.ParseSelect("id, amount * 100 AS cents")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := db.CreateView(ctx, "filtered", source, matview.Definition{Select: sel, Where: "amount >= 50"}); err != nil {
		tb.Fatal(err)
	}
}

// inProcessServe runs the daemon in this process on dir and subscribes to
// every view's notifications. Everything stops at test end.
func inProcessServe(tb testing.TB, dir string) <-chan *stream.RefreshNotification {
	tb.Helper()
	return inProcessServeLog(tb, dir, slog.New(slog.NewTextHandler(discard{}, nil)))
}

// inProcessServeLog is inProcessServe with the daemon logging to log.
func inProcessServeLog(tb testing.TB, dir string, log *slog.Logger) <-chan *stream.RefreshNotification {
	tb.Helper()
	ctx := context.Background()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	daemon.BindCommandFlags(fs)
	if err := fs.Parse([]string{"--db", dir, "--admin-addr", "127.0.0.1:0"}); err != nil {
		tb.Fatal(err)
	}
	cfg, err := daemon.LoadConfig(fs, nil)
	if err != nil {
		tb.Fatal(err)
	}
	deps, err := wire.Deps(cfg, log)
	if err != nil {
		tb.Fatal(err)
	}
	srv := daemon.NewServer(cfg, deps)
	drain, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Run(drain, context.Background()) }()
	select {
	case <-srv.Started():
	case err := <-done:
		tb.Fatalf("serve: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for ok, _ := srv.Ready(); !ok; ok, _ = srv.Ready() {
		if time.Now().After(deadline) {
			tb.Fatal("daemon not ready after 30s")
		}
		time.Sleep(time.Millisecond)
	}
	info := srv.Info()
	notes, closeSub := subscribe(tb, info.NATSURL, info.Token)
	tb.Cleanup(func() {
		closeSub()
		stop()
		if err := <-done; err != nil && ctx.Err() == nil {
			tb.Logf("serve: %v", err)
		}
		deps.Close()
	})
	return notes
}

// subscribe connects to NATS like `mvd subscribe` and delivers every
// refresh notification of every view (buffered generously).
func subscribe(tb testing.TB, url, token string) (<-chan *stream.RefreshNotification, func()) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := stream.Connect(ctx, stream.ConnectOptions{URL: url, Token: token})
	if err != nil {
		tb.Fatal(err)
	}
	sub, err := conn.SubscribeRefreshes(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	out := make(chan *stream.RefreshNotification, 1<<16)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			n, err := sub.Next(ctx)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				tb.Logf("subscription: %v", err)
				return
			}
			out <- n
		}
	}()
	return out, func() { cancel(); wg.Wait(); conn.Close() }
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// soakSample is one sample of the process after a refresh.
type soakSample struct {
	rss        int64
	goroutines int
	heapLive   uint64 // live Go heap after the last GC
}

// heapLive reads the live heap of the last GC cycle (no GC forced).
func heapLive() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// soakResult is what a soak measured.
type soakResult struct {
	refreshes, commits  int
	wall                time.Duration
	rssFirst, rssLast   int64 // medians of the first and last quarter after warm-up
	gorFirst, gorLast   int
	rssMax              int64
	heapFirst, heapLast uint64 // live Go heap, medians of the same quarters
	fragmentsAtEnd      int
	refreshErrors       int
	meanRefreshInterval time.Duration
}

// The soak's workload is a retention table, whose state stays bounded as
// a real event table's does: LanceDB 0.39 appends one event per step and
// deletes the oldest beyond a window of soakWindow rows, and compacts the
// source (optimize) every soakCompactEvery steps. Lance drops a fragment
// whose rows are all deleted, in the source and in the views mvd commits,
// so every table's fragment count stays bounded, and flat RSS tests the
// daemon for leaks rather than data growth. `_versions/` grows by a few
// manifests per step (version cleanup is a later issue): nothing in the
// daemon may keep per-version state in memory.
const (
	soakWindow       = 300
	soakCompactEvery = 250
)

func soakRecord(i int64) lancedbtest.Record {
	return lancedbtest.Record{"id": i, "kind": fmt.Sprintf("k%d", i%8), "amount": float64(i % 100)}
}

func soakRecords(lo, hi int64) []lancedbtest.Record {
	rs := make([]lancedbtest.Record, 0, hi-lo)
	for i := lo; i < hi; i++ {
		rs = append(rs, soakRecord(i))
	}
	return rs
}

// rssParts splits this process's RSS into anonymous memory (heaps) and
// file pages (mapped files: Badger's tables, binaries), which grow for
// different reasons.
func rssParts() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && (f[0] == "RssAnon:" || f[0] == "RssFile:") {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			out = append(out, fmt.Sprintf("%s %d MB", strings.TrimSuffix(f[0], ":"), kb>>10))
		}
	}
	return strings.Join(out, ", ")
}

// soakFragments counts the fragments of the source and the views.
func soakFragments(tb testing.TB, dir string, tables ...string) map[string]int {
	tb.Helper()
	ctx := context.Background()
	out := map[string]int{}
	for _, name := range tables {
		t, err := lance.Open(ctx, vfs.OS(), filepath.Join(dir, name+".lance"))
		if err != nil {
			tb.Fatal(err)
		}
		s, err := t.Latest(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		out[name] = len(s.Fragments)
	}
	return out
}

// writeHeapProfile writes a heap profile (after a GC) to
// $MVD_SOAK_PPROF/heap-<label>.pprof when MVD_SOAK_PPROF is set, for
// `go tool pprof -diff_base` between two points of a soak.
func writeHeapProfile(tb testing.TB, label string) {
	d := os.Getenv("MVD_SOAK_PPROF")
	if d == "" {
		return
	}
	runtime.GC()
	f, err := os.Create(filepath.Join(d, "heap-"+label+".pprof"))
	if err != nil {
		tb.Logf("heap profile: %v", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		tb.Logf("heap profile: %v", err)
	}
}

// runSoak drives refreshes (≥ n, across both views) through the in-process
// daemon and samples RSS and goroutines after every step.
func runSoak(tb testing.TB, n int) soakResult {
	dir := tb.TempDir()
	d := lancedbtest.StartDriver(tb, dir)
	schema, err := arrowjson.FromSchema(soakSchema)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := d.CreateTable("events", schema, soakRecords(0, soakWindow)); err != nil {
		tb.Fatal(err)
	}
	createViews(tb, dir, "events")
	notes := inProcessServe(tb, dir)
	next := int64(soakWindow)

	var samples []soakSample
	res := soakResult{}
	start := time.Now()
	lap, lapRefreshes, report := start, 0, 1000
	// await waits until both views have been refreshed to version v.
	await := func(v uint64) {
		need := map[string]bool{"all_rows": true, "filtered": true}
		deadline := time.After(60 * time.Second)
		for len(need) > 0 {
			select {
			case note := <-notes:
				if note.Error != "" {
					res.refreshErrors++
					tb.Errorf("view %s: refresh error: %s", note.View, note.Error)
				}
				res.refreshes++
				if note.SourceVersion >= v {
					delete(need, note.View)
				}
			case <-deadline:
				tb.Fatalf("step %d (version %d): views %v not refreshed after 60s", res.commits, v, need)
			}
		}
	}
	for step := 1; res.refreshes < n; step++ {
		if _, err := d.Add("events", []lancedbtest.Record{soakRecord(next)}); err != nil {
			tb.Fatalf("step %d: add: %v", step, err)
		}
		next++
		v, err := d.Delete("events", fmt.Sprintf("id < %d", next-soakWindow))
		if err != nil {
			tb.Fatalf("step %d: delete: %v", step, err)
		}
		res.commits += 2
		if step%soakCompactEvery == 0 {
			if v, err = d.Optimize("events"); err != nil {
				tb.Fatalf("step %d: optimize: %v", step, err)
			}
			res.commits++
		}
		await(v)
		rss, _, _ := procStatus()
		samples = append(samples, soakSample{rss: rss, goroutines: runtime.NumGoroutine(), heapLive: heapLive()})
		if step == 200 {
			writeHeapProfile(tb, "early")
		}
		if res.refreshes >= report {
			// Progress, so a long soak cut short still tells its story.
			frags := soakFragments(tb, dir, "events", "all_rows", "filtered")
			tb.Logf("soak progress: %d refreshes, %d commits, %v, %.1f ms per refresh since the last line, RSS %d MB (%s), live heap %d MB, goroutines %d, fragments %v (source compacted %d steps ago), load average %s",
				res.refreshes, res.commits, time.Since(start).Round(time.Second), float64(time.Since(lap).Microseconds())/1000/float64(res.refreshes-lapRefreshes),
				rss>>20, rssParts(), heapLive()>>20, runtime.NumGoroutine(), frags, step%soakCompactEvery, loadAvg())
			lap, lapRefreshes = time.Now(), res.refreshes
			report += 1000
		}
	}
	writeHeapProfile(tb, "end")
	res.wall = time.Since(start)
	res.meanRefreshInterval = res.wall / time.Duration(res.refreshes)

	// Warm-up: the first 10% of the samples (Badger memtables, NATS
	// buffers, the provenance index and plans being built).
	s := samples[len(samples)/10:]
	q := len(s) / 4
	if q == 0 {
		tb.Fatalf("too few samples (%d)", len(samples))
	}
	res.rssFirst, res.gorFirst = medianSample(s[:q])
	res.rssLast, res.gorLast = medianSample(s[len(s)-q:])
	for _, x := range samples {
		res.rssMax = max(res.rssMax, x.rss)
	}
	res.heapFirst, res.heapLast = medianHeap(s[:q]), medianHeap(s[len(s)-q:])
	res.fragmentsAtEnd = soakFragments(tb, dir, "events")["events"]
	return res
}

func medianHeap(s []soakSample) uint64 {
	h := make([]uint64, len(s))
	for i, x := range s {
		h[i] = x.heapLive
	}
	slices.Sort(h)
	return h[len(h)/2]
}

func medianSample(s []soakSample) (int64, int) {
	rss := make([]int64, len(s))
	gor := make([]int, len(s))
	for i, x := range s {
		rss[i], gor[i] = x.rss, x.goroutines
	}
	slices.Sort(rss)
	slices.Sort(gor)
	return rss[len(rss)/2], gor[len(gor)/2]
}

// checkFlat fails when RSS or the goroutine count grew between the first
// and the last quarter. The tables' state is bounded, so RSS may rise only
// by what the GC lets the heap float and Badger's memtables and the
// version listings (one manifest name per version) take: 25% + 32 MB;
// goroutines by 5 (timers, NATS reconnect helpers).
func checkFlat(tb testing.TB, r soakResult) {
	tb.Helper()
	if limit := r.rssFirst + r.rssFirst/4 + 32<<20; r.rssLast > limit {
		tb.Errorf("RSS grew: first-quarter median %d MB, last-quarter %d MB (limit %d MB)", r.rssFirst>>20, r.rssLast>>20, limit>>20)
	}
	if r.gorLast > r.gorFirst+5 {
		tb.Errorf("goroutines grew: first-quarter median %d, last-quarter %d", r.gorFirst, r.gorLast)
	}
}

func logSoak(tb testing.TB, r soakResult) {
	tb.Logf("soak: %d refreshes for %d commits in %v (%.1f ms per refresh); RSS median %d → %d MB (max %d MB); live heap %d → %d MB; goroutines %d → %d; source fragments %d; load average %s",
		r.refreshes, r.commits, r.wall.Round(time.Millisecond), float64(r.meanRefreshInterval.Microseconds())/1000,
		r.rssFirst>>20, r.rssLast>>20, r.rssMax>>20, r.heapFirst>>20, r.heapLast>>20, r.gorFirst, r.gorLast, r.fragmentsAtEnd, loadAvg())
}

// TestSoakShort is the CI form of the soak: 300 refreshes.
func TestSoakShort(t *testing.T) {
	r := runSoak(t, 300)
	logSoak(t, r)
	checkFlat(t, r)
	if r.refreshes < 300 || r.commits < 150 {
		t.Fatalf("only %d refreshes for %d commits", r.refreshes, r.commits)
	}
}

// BenchmarkSoak is the full soak: 10,000 refreshes (5,000 commits × two
// views; MVD_SOAK_REFRESHES overrides), 10–30 minutes on this machine as
// the refreshes slow with the fragment count. One soak per iteration.
func BenchmarkSoak(b *testing.B) {
	n := 10_000
	if s := os.Getenv("MVD_SOAK_REFRESHES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 40 {
			b.Fatalf("MVD_SOAK_REFRESHES=%q: want an integer ≥ 40", s)
		}
		n = v
	}
	for range b.N {
		r := runSoak(b, n)
		logSoak(b, r)
		checkFlat(b, r)
		b.ReportMetric(float64(r.refreshes), "refreshes")
		b.ReportMetric(float64(r.meanRefreshInterval.Microseconds())/1000, "ms/refresh")
		b.ReportMetric(float64(r.rssFirst>>20), "rss-first-MB")
		b.ReportMetric(float64(r.rssLast>>20), "rss-last-MB")
		b.ReportMetric(float64(r.heapFirst>>20), "heap-first-MB")
		b.ReportMetric(float64(r.heapLast>>20), "heap-last-MB")
		b.ReportMetric(float64(r.gorFirst), "goroutines-first")
		b.ReportMetric(float64(r.gorLast), "goroutines-last")
	}
}
