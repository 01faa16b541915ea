package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/sqlexpr"
	"github.com/mvd-project/mvd/vfs"
)

// The view refresh benchmark of issue 10, side by side with LanceDB 0.39 in
// one run, on the peer workload: source `events` written by LanceDB in
// commits of 100k rows with stable row ids, and each of the views V1–V3
// (lancedbtest.EventViews) created five times over it:
//
//	V1        created and refreshed by LanceDB (Driver.MeasureRefresh: timed
//	          inside node, node's peak RSS, view versions committed)
//	V1_mvd    created and refreshed by mvd in this process (matview.View.Refresh)
//	V1_sql    created and refreshed through one warm `mvd sql --db DIR --json`
//	          process: a REFRESH line in, its answer line out, timed here
//	V1_nofsync  as V1_mvd, through a second matview.DB over vfs.Unsynced:
//	          no fsync, as LanceDB's local object store (never for the
//	          full rebuilds); reported beside, never instead of, V1_mvd
//	V1_strict   as V1_mvd, through a matview.DB with durability strict:
//	          every commit's name synced before the refresh returns (the
//	          default syncs a watermark-only commit's name just after it
//	          returns); also beside V1_mvd, row changes only
//
// After each source operation (1-row update `amount = 100 - amount` of a
// random id, 1-row delete of a random id, 1-row append, 100k-row append,
// nothing, and a `full` rebuild) every view is refreshed by its engine over
// the same source version; the order of the engines rotates from one
// refresh to the next so that none always runs first on a cold page cache.
// The first repetition of every operation is a warm-up and is not counted.
//
// Asserted (smoke and benchmark alike) are facts, never timings: every mvd
// refresh commits exactly one view version (none for a no-op), in-process
// and shell agree on mode and rows written, all three engines reflect the
// same source version, and the three copies of a view hold as many rows as
// each other (counted by LanceDB). The smoke run also requires incremental
// refreshes for every row change (LanceDB rebuilds V3 there) and checks
// every view's rows against the definition evaluated by LanceDB.

// viewBenchConfig sizes one run.
type viewBenchConfig struct {
	Rows     uint64 // source rows
	Batch    uint64 // rows per LanceDB commit while writing the source
	Append   uint64 // rows of the big append
	Reps     int    // measured repetitions of each operation (after one warm-up)
	FullReps int    // measured repetitions of the full rebuild
	Seed     int
	Cache    string // directory keeping the generated source between runs ("" = none)
	Smoke    bool   // strict mode checks and content checks; no timings reported as targets
}

func envUint(tb testing.TB, name string, def uint64) uint64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 10, 64)
	if err != nil {
		tb.Fatalf("%s=%q: %v", name, s, err)
	}
	return n
}

// TestViewRefreshSmoke runs the whole view benchmark on a 20k-row source
// (a few seconds) so that it cannot rot: it asserts the correctness facts
// only. MVD_BENCH_VIEW_ROWS resizes it.
func TestViewRefreshSmoke(t *testing.T) {
	cfg := viewBenchConfig{
		Rows:     envUint(t, "MVD_BENCH_VIEW_ROWS", 20_000),
		Batch:    10_000,
		Append:   2_000,
		Reps:     1,
		FullReps: 1,
		Seed:     1,
		Smoke:    true,
	}
	rep := runViewBench(t, cfg)
	t.Log("\n" + rep.markdown())
}

// viewCacheDir is where the generated source is kept between runs:
// MVD_BENCH_VIEW_CACHE, by default .cache/bench-views in the repository;
// "" when it is "off".
func viewCacheDir(tb testing.TB) string {
	switch c := os.Getenv("MVD_BENCH_VIEW_CACHE"); c {
	case "":
		return filepath.Join(lancedbtest.RepoRoot(tb), ".cache", "bench-views")
	case "off":
		return ""
	default:
		return c
	}
}

// BenchmarkViewRefresh is the full benchmark: MVD_BENCH_VIEW_ROWS source
// rows (default 5,000,000), MVD_BENCH_VIEW_REPS measured repetitions
// (default 5; full rebuild: 3), the source cached in
// MVD_BENCH_VIEW_CACHE (default .cache/bench-views in the repository; "off"
// writes it afresh). It runs once whatever b.N is (one run takes minutes),
// prints a markdown table of medians and ratios on stdout (also written to
// MVD_BENCH_VIEW_OUT if set) and reports the ratios as metrics.
func BenchmarkViewRefresh(b *testing.B) {
	reps := int(envUint(b, "MVD_BENCH_VIEW_REPS", 5))
	cfg := viewBenchConfig{
		Rows:     envUint(b, "MVD_BENCH_VIEW_ROWS", 5_000_000),
		Batch:    100_000,
		Append:   100_000,
		Reps:     reps,
		FullReps: int(envUint(b, "MVD_BENCH_VIEW_FULL_REPS", uint64(min(reps, 3)))),
		Seed:     1,
		Cache:    viewCacheDir(b),
	}
	b.ResetTimer()
	rep := runViewBench(b, cfg)
	b.StopTimer()
	md := rep.markdown()
	fmt.Println(md)
	if out := os.Getenv("MVD_BENCH_VIEW_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(md), 0o644); err != nil {
			b.Error(err)
		}
	}
	rep.reportMetrics(b)
}

// engine indexes the three refreshers.
type engine int

const (
	engLanceDB engine = iota
	engMVD
	engShell
	engNoSync // in-process, no fsync (vfs.Unsynced): the honest match for LanceDB's durability
	engStrict // in-process, durability strict: every name synced before the refresh returns
	numEngines
)

var engineNames = [numEngines]string{"LanceDB", "mvd", "mvd sql", "mvd no-fsync", "mvd strict"}

// rowChangesOnly reports whether engine e is measured on the row-change
// operations only (not the full rebuilds).
func rowChangesOnly(e engine) bool { return e == engNoSync || e == engStrict }

// viewName is the name of a benchmark view's copy for an engine.
func viewName(e engine, v string) string {
	switch e {
	case engMVD:
		return v + "_mvd"
	case engShell:
		return v + "_sql"
	case engNoSync:
		return v + "_nofsync"
	case engStrict:
		return v + "_strict"
	}
	return v
}

// refreshSample is one refresh by one engine.
type refreshSample struct {
	ms       float64
	mode     string
	rows     uint64
	versions int    // view versions the refresh committed
	peakKB   uint64 // peak RSS of the refreshing process (LanceDB, shell)
}

// cell is everything measured for one (operation, view).
type cell struct {
	samples [numEngines][]refreshSample
}

// viewBenchReport is the outcome of one run.
type viewBenchReport struct {
	cfg       viewBenchConfig
	ops       []string
	cells     map[string]map[string]*cell // op → view → cell
	loadStart string
	loadEnd   string
	when      time.Time
	isolated  bool // every refresh started from a flushed disk
}

type viewBench struct {
	tb       testing.TB
	cfg      viewBenchConfig
	ctx      context.Context
	d        *lancedbtest.Driver
	db       *matview.DB
	dbNoSync *matview.DB // over vfs.Unsynced
	dbStrict *matview.DB // durability strict
	sh       *mvdShell
	dir      string
	turn     int // rotates the order of the engines
	report   *viewBenchReport
	tables   map[string]*lance.Table // views of the shell, read for their versions
	lastSrc  uint64
	fstrace  *timingFS         // MVD_BENCH_VIEW_FSTRACE: the in-process DB's calls
	lastFS   string            // the calls of the last in-process refresh
	fsTables map[string]string // "op view" -> the calls of its last measured round
	isolate  bool              // sync(2) before every refresh (MVD_BENCH_VIEW_ISOLATE=0: not)
	notQuiet int               // waits for another process's quiet that ran out (quiet)
}

func runViewBench(tb testing.TB, cfg viewBenchConfig) *viewBenchReport {
	ctx := context.Background()
	dir := tb.TempDir()
	d := lancedbtest.StartDriver(tb, dir)
	d.Timeout = 30 * time.Minute
	t0 := time.Now()
	bin := buildMVD(tb)
	tb.Logf("built mvd in %.1f s", time.Since(t0).Seconds())
	r := &viewBenchReport{cfg: cfg, cells: map[string]map[string]*cell{}, loadStart: loadAvg(), when: time.Now().UTC()}
	prepareEvents(tb, d, cfg.Cache, cfg.Rows, cfg.Batch, cfg.Seed)

	// MVD_BENCH_VIEW_FSTRACE=1 times every filesystem call of the in-process
	// (fsync) refreshes and prints, per operation and view, the calls of its
	// last measured round.
	var fstrace *timingFS
	opts := matview.Options{}
	if os.Getenv("MVD_BENCH_VIEW_FSTRACE") != "" {
		fstrace = &timingFS{FS: vfs.OS(), stats: map[string]*opStat{}}
		opts.FS = fstrace
	}
	db, err := matview.OpenWith(dir, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	dbNoSync, err := matview.OpenWith(dir, matview.Options{FS: vfs.Unsynced(vfs.OS())})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = dbNoSync.Close() })
	dbStrict, err := matview.OpenWith(dir, matview.Options{Durability: vfs.DurabilityStrict})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = dbStrict.Close() })
	sh := startShell(tb, bin, dir)
	vb := &viewBench{tb: tb, cfg: cfg, ctx: ctx, d: d, db: db, dbNoSync: dbNoSync, dbStrict: dbStrict, sh: sh, dir: dir, report: r, tables: map[string]*lance.Table{}, fstrace: fstrace, fsTables: map[string]string{}}
	// Each refresh starts from a flushed disk (MVD_BENCH_VIEW_ISOLATE=0 turns
	// it off): the engines take turns on one filesystem, and the ones that
	// never fsync (LanceDB, the no-fsync copy) leave their writes to the
	// next engine's first fsync, up to ~100 MB after a full rebuild.
	vb.isolate = os.Getenv("MVD_BENCH_VIEW_ISOLATE") != "0"
	r.isolated = vb.isolate
	if fstrace != nil {
		tb.Cleanup(func() {
			for _, op := range r.ops {
				for _, v := range lancedbtest.EventViewNames {
					if t, ok := vb.fsTables[op+" "+v]; ok {
						fmt.Fprintf(os.Stderr, "fs calls of %s %s (in-process, last round):\n%s", op, v, t)
					}
				}
			}
		})
	}
	specs := lancedbtest.EventViews()
	for _, v := range lancedbtest.EventViewNames {
		spec := specs[v]
		if _, err := d.CreateView(viewName(engLanceDB, v), "events", spec); err != nil {
			tb.Fatalf("LanceDB create %s: %v", v, err)
		}
		if _, err := db.CreateView(ctx, viewName(engMVD, v), "events", toDefinition(spec)); err != nil {
			tb.Fatalf("mvd create %s: %v", v, err)
		}
		if _, _, err := sh.exec(createSQL(viewName(engShell, v), spec)); err != nil {
			tb.Fatal(err)
		}
		if _, err := dbNoSync.CreateView(ctx, viewName(engNoSync, v), "events", toDefinition(spec)); err != nil {
			tb.Fatalf("mvd create %s: %v", viewName(engNoSync, v), err)
		}
		if _, err := dbStrict.CreateView(ctx, viewName(engStrict, v), "events", toDefinition(spec)); err != nil {
			tb.Fatalf("mvd create %s: %v", viewName(engStrict, v), err)
		}
	}

	t0 = time.Now()
	vb.measure("initial", false, false)
	tb.Logf("initial refreshes in %.1f s", time.Since(t0).Seconds())
	t0 = time.Now()
	// MVD_BENCH_VIEW_CPUPROFILE=FILE profiles this process (mvd in-process:
	// LanceDB and the shell run elsewhere) over the row-change operations,
	// MVD_BENCH_VIEW_CPUPROFILE_FULL=FILE over the full rebuilds.
	stopProfile := startProfile(tb, os.Getenv("MVD_BENCH_VIEW_CPUPROFILE"))
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 7))
	next := cfg.Rows
	deleted := map[uint64]bool{}
	// draw picks a random id of the original rows that is not deleted.
	draw := func() uint64 {
		for {
			if id := rng.Uint64N(cfg.Rows); !deleted[id] {
				return id
			}
		}
	}
	appendOp := "append_" + humanCount(cfg.Append)
	for rep := 0; rep <= cfg.Reps; rep++ {
		warm := rep == 0
		vb.sourceOp(func() (uint64, error) {
			u, err := d.Update("events", fmt.Sprintf("id = %d", draw()), map[string]string{"amount": "100 - amount"})
			if err == nil && u.RowsUpdated != 1 {
				err = fmt.Errorf("update: %d rows updated, want 1", u.RowsUpdated)
			}
			return u.Version, err
		})
		vb.measure("update_1", false, warm)
		vb.sourceOp(func() (uint64, error) {
			id := draw()
			deleted[id] = true
			return d.Delete("events", fmt.Sprintf("id = %d", id))
		})
		vb.measure("delete_1", false, warm)
		vb.sourceOp(func() (uint64, error) { return d.AppendEvents("events", next, 1, 100+rep) })
		next++
		vb.measure("append_1", false, warm)
		vb.sourceOp(func() (uint64, error) { return d.AppendEvents("events", next, cfg.Append, 200+rep) })
		next += cfg.Append
		vb.measure(appendOp, false, warm)
		vb.measure("no_op", false, warm)
	}
	stopProfile()
	tb.Logf("%d rounds of row changes in %.1f s", cfg.Reps+1, time.Since(t0).Seconds())
	t0 = time.Now()
	stopProfile = startProfile(tb, os.Getenv("MVD_BENCH_VIEW_CPUPROFILE_FULL"))
	for rep := 0; cfg.FullReps > 0 && rep <= cfg.FullReps; rep++ {
		vb.measure("full", true, rep == 0)
	}
	stopProfile()
	tb.Logf("full rebuilds in %.1f s; %d waits for another process to be quiet ran out (50 ms)", time.Since(t0).Seconds(), vb.notQuiet)
	t0 = time.Now()
	if cfg.Smoke {
		for _, v := range lancedbtest.EventViewNames {
			for e := engine(0); e < numEngines; e++ {
				if err := d.CheckViewAtWatermark(viewName(e, v)); err != nil {
					tb.Errorf("%s: %v", viewName(e, v), err)
				}
			}
		}
	}
	if cfg.Smoke {
		tb.Logf("content checks in %.1f s", time.Since(t0).Seconds())
	}
	r.loadEnd = loadAvg()
	return r
}

// startProfile starts a CPU profile into path ("" = none) and returns its
// stop function (idempotent; also run at cleanup).
func startProfile(tb testing.TB, path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		tb.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(func() { pprof.StopCPUProfile(); f.Close() }) }
	tb.Cleanup(stop)
	return stop
}

// sourceOp applies one LanceDB write to the source and remembers its version.
func (vb *viewBench) sourceOp(f func() (uint64, error)) {
	vb.tb.Helper()
	v, err := f()
	if err != nil {
		vb.tb.Fatal(err)
	}
	vb.lastSrc = v
}

// measure refreshes every view with every engine (in rotating order) and
// checks the facts; warm-up samples are checked but not kept.
func (vb *viewBench) measure(op string, full, warm bool) {
	tb := vb.tb
	tb.Helper()
	r := vb.report
	if !warm && r.cells[op] == nil {
		r.cells[op] = map[string]*cell{}
		r.ops = append(r.ops, op)
	}
	for _, v := range lancedbtest.EventViewNames {
		var got [numEngines]refreshSample
		var src [numEngines]uint64
		for i := engine(0); i < numEngines; i++ {
			e := (engine(vb.turn) + i) % numEngines
			if rowChangesOnly(e) && full {
				continue
			}
			s, sv := vb.refresh(e, v, full)
			got[e], src[e] = s, sv
		}
		vb.turn++
		vb.check(op, v, got, src)
		if !warm && vb.fstrace != nil {
			vb.fsTables[op+" "+v] = vb.lastFS
		}
		if !warm {
			c := r.cells[op][v]
			if c == nil {
				c = &cell{}
				r.cells[op][v] = c
			}
			for e := range got {
				if rowChangesOnly(engine(e)) && full {
					continue
				}
				c.samples[e] = append(c.samples[e], got[e])
			}
		}
	}
}

// refresh runs one refresh of view v's copy by engine e and returns the
// sample and the source version the view now reflects.
func (vb *viewBench) refresh(e engine, v string, full bool) (refreshSample, uint64) {
	tb := vb.tb
	tb.Helper()
	name := viewName(e, v)
	if vb.isolate {
		// Untimed: what the engine before wrote without fsync (LanceDB and
		// the no-fsync copy never sync; a full rebuild leaves ~100 MB) is
		// not flushed by this engine's first fsync.
		syscall.Sync()
	}
	switch e {
	case engLanceDB:
		s, err := vb.d.MeasureRefresh(name, lancedbtest.RefreshOptions{Full: full})
		if err != nil {
			tb.Fatalf("LanceDB refresh %s: %v", name, err)
		}
		vb.quiet(vb.d.PID())
		return refreshSample{ms: s.MS, mode: s.Mode, rows: s.RowsWritten, versions: s.ViewVersions, peakKB: s.PeakRSSKB}, s.SourceVersion
	case engMVD, engNoSync, engStrict:
		db := vb.db
		switch e {
		case engNoSync:
			db = vb.dbNoSync
		case engStrict:
			db = vb.dbStrict
		}
		view, err := db.OpenView(vb.ctx, name)
		if err != nil {
			tb.Fatal(err)
		}
		before := vb.versionCount(view.Table())
		trace := e == engMVD && vb.fstrace != nil
		if trace {
			vb.fstrace.reset()
			vb.fstrace.enable(true)
		}
		t0 := time.Now()
		res, err := view.Refresh(vb.ctx, matview.RefreshOptions{Full: full})
		el := time.Since(t0)
		if trace {
			vb.fstrace.enable(false)
			vb.lastFS = vb.fstrace.table(1)
		}
		if err != nil {
			tb.Fatalf("mvd refresh %s: %v", name, err)
		}
		// Untimed: what the refresh left to the background (its name's
		// sync, the next commit's build and staging file) ends here, not
		// inside the next engine's refresh.
		if err := view.Table().Idle(); err != nil {
			tb.Fatalf("mvd refresh %s: %v", name, err)
		}
		return refreshSample{ms: ms(el), mode: string(res.Mode), rows: res.RowsWritten, versions: vb.versionCount(view.Table()) - before}, res.SourceVersion
	default:
		t := vb.tables[name]
		if t == nil {
			var err error
			if t, err = lance.Open(vb.ctx, vfs.OS(), filepath.Join(vb.dir, name+".lance")); err != nil {
				tb.Fatal(err)
			}
			vb.tables[name] = t
		}
		before := vb.versionCount(t)
		el, peak, res, err := vb.sh.refresh(name, full)
		if err != nil {
			tb.Fatal(err)
		}
		vb.quiet(vb.sh.cmd.Process.Pid)
		return refreshSample{ms: ms(el), mode: string(res.Mode), rows: res.RowsWritten, versions: vb.versionCount(t) - before, peakKB: peak}, res.SourceVersion
	}
}

// quiet waits (untimed, up to 50 ms) for the process of an engine that
// ran in another process to finish what its refresh left running, as
// Table.Idle does for the in-process engines; it counts the waits that
// ran out.
func (vb *viewBench) quiet(pid int) {
	if !waitProcQuiet(pid, 50*time.Millisecond) {
		vb.notQuiet++
	}
}

func (vb *viewBench) versionCount(t *lance.Table) int {
	vs, err := t.Versions(vb.ctx)
	if err != nil {
		vb.tb.Fatal(err)
	}
	return len(vs)
}

// check asserts the facts of one round of refreshes of view v.
func (vb *viewBench) check(op, v string, got [numEngines]refreshSample, src [numEngines]uint64) {
	tb := vb.tb
	tb.Helper()
	want := 1
	if op == "no_op" {
		want = 0
	}
	engines := []engine{engMVD, engShell, engNoSync, engStrict}
	if op == "full" {
		engines = engines[:2]
	}
	rowOnly := engines[2:]
	for _, e := range engines {
		if got[e].versions != want {
			tb.Errorf("%s %s: %s committed %d view versions, want %d", op, v, engineNames[e], got[e].versions, want)
		}
	}
	if m, s := got[engMVD], got[engShell]; m.mode != s.mode || m.rows != s.rows {
		tb.Errorf("%s %s: in-process %s/%d rows, shell %s/%d rows", op, v, m.mode, m.rows, s.mode, s.rows)
	}
	if src[engMVD] != src[engLanceDB] || src[engShell] != src[engLanceDB] {
		tb.Errorf("%s %s: source versions LanceDB %d, mvd %d, shell %d", op, v, src[engLanceDB], src[engMVD], src[engShell])
	}
	for _, e := range rowOnly {
		if src[e] != src[engLanceDB] {
			tb.Errorf("%s %s: source versions LanceDB %d, %s %d", op, v, src[engLanceDB], engineNames[e], src[e])
		}
		if got[e].mode != got[engMVD].mode || got[e].rows != got[engMVD].rows {
			tb.Errorf("%s %s: mvd %s/%d rows, %s %s/%d rows", op, v, got[engMVD].mode, got[engMVD].rows, engineNames[e], got[e].mode, got[e].rows)
		}
	}
	if vb.lastSrc != 0 && src[engMVD] != vb.lastSrc {
		tb.Errorf("%s %s: mvd reflects source version %d, the source is at %d", op, v, src[engMVD], vb.lastSrc)
	}
	wantMode := map[string]string{"initial": "rebuild", "full": "rebuild", "no_op": "no_op"}[op]
	if wantMode == "" {
		wantMode = string(matview.ModeIncremental)
	}
	if (vb.cfg.Smoke || wantMode != string(matview.ModeIncremental)) && got[engMVD].mode != wantMode {
		tb.Errorf("%s %s: mvd refreshed %s, want %s", op, v, got[engMVD].mode, wantMode)
	}
	var counts [numEngines]uint64
	for e := engine(0); e < numEngines; e++ {
		n, err := vb.d.Count(viewName(e, v), 0)
		if err != nil {
			tb.Fatalf("LanceDB count %s: %v", viewName(e, v), err)
		}
		counts[e] = n
	}
	if counts[engMVD] != counts[engLanceDB] || counts[engShell] != counts[engLanceDB] {
		tb.Errorf("%s %s: rows LanceDB %d, mvd %d, shell %d", op, v, counts[engLanceDB], counts[engMVD], counts[engShell])
	}
	for _, e := range rowOnly {
		if counts[e] != counts[engLanceDB] {
			tb.Errorf("%s %s: rows LanceDB %d, %s %d", op, v, counts[engLanceDB], engineNames[e], counts[e])
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// toDefinition is a LanceDB view spec as a matview definition.
func toDefinition(s lancedbtest.ViewSpec) matview.Definition {
	d := matview.Definition{Where: s.Where, Limit: s.Limit}
	for _, p := range s.Select {
		e := p.Expr
		if e == "" {
			e = sqlexpr.QuoteIdent(p.Name)
		}
		d.Select = append(d.Select, plan.Projection{Output: p.Name, Expression: e})
	}
	return d
}

// createSQL is a LanceDB view spec as mvd's CREATE MATERIALIZED VIEW.
func createSQL(name string, s lancedbtest.ViewSpec) string {
	q := fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS SELECT %s FROM events", name, s.SelectList())
	if s.Where != "" {
		q += " WHERE " + s.Where
	}
	if s.Limit != nil {
		q += fmt.Sprintf(" LIMIT %d", *s.Limit)
	}
	return q
}

// humanCount is 100000 as "100k", 2000 as "2k".
func humanCount(n uint64) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.FormatUint(n, 10)
}

// loadAvg is /proc/loadavg's first three fields ("" when unknown).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
