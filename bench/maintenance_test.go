package bench

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mvd-project/mvd/arrowjson"
	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/stream"
	"github.com/mvd-project/mvd/vfs"
)

// The maintenance benchmark of issue 22. LanceDB 0.39 makes single-row
// commits to "events" (appends; every 10th an update or a delete of an
// old row) while the in-process daemon (mvd serve's wiring) keeps
// all_rows and filtered fresh, the views created with a retention of 2s
// and at least 5 versions and the default compaction policy. Each commit
// waits for both views' notifications (source commit returned in LanceDB
// → notification at a subscriber: freshness); the benchmark also paces
// the commits at a steady rate (maintInterval). After the last commit it
// measures, within 30 s, each view's fragments, versions and bytes, and
// LanceDB's optimized copy of the all-rows view (LanceDB's own view of
// the same definition, refreshed and optimized).

// maintRun is what one run measured.
type maintRun struct {
	commits int
	notify  map[string][]time.Duration // per view, per commit, in commit order
	last    uint64                     // the source version of the last commit
	wall    time.Duration
	// Per commit: its source version and commit time, and per view when
	// its notification arrived (for the trace's stages).
	versions  []uint64
	committed []time.Time
	returned  []time.Time // LanceDB's call returned to the driver's client
	arrived   map[string][]time.Time
	// Per commit, when its manifest appeared (the commit became visible
	// to readers), and per view the freshness measured from then.
	visible     []time.Time
	fromVisible map[string][]time.Duration
	// Per commit, after its notifications: the CPU time used so far by
	// this process (the in-process daemon, and the driver's client) and
	// by LanceDB's driver process.
	cpu, lancedbCPU []time.Duration
}

// add appends more's commits to run's.
func (run *maintRun) add(more maintRun) {
	for _, view := range freshViews {
		run.notify[view] = append(run.notify[view], more.notify[view]...)
		run.fromVisible[view] = append(run.fromVisible[view], more.fromVisible[view]...)
		run.arrived[view] = append(run.arrived[view], more.arrived[view]...)
	}
	run.versions = append(run.versions, more.versions...)
	run.committed = append(run.committed, more.committed...)
	run.returned = append(run.returned, more.returned...)
	run.visible = append(run.visible, more.visible...)
	run.cpu = append(run.cpu, more.cpu...)
	run.lancedbCPU = append(run.lancedbCPU, more.lancedbCPU...)
	run.commits += more.commits
}

// maintSetup creates events (rows rows, written by LanceDB in batches) and
// the two views with the retention, and starts the daemon; with
// MVD_MAINT_TRACE set, tracing its stages (else trace is nil).
func maintSetup(tb testing.TB, rows int64) (dir string, d *lancedbtest.Driver, notes <-chan noteAt, trace *maintTrace) {
	tb.Helper()
	dir = tb.TempDir()
	d = lancedbtest.StartDriver(tb, dir)
	schema, err := arrowjson.FromSchema(soakSchema)
	if err != nil {
		tb.Fatal(err)
	}
	const batch = 50_000
	if _, err := d.CreateTable("events", schema, soakRecords(0, min(rows, batch))); err != nil {
		tb.Fatal(err)
	}
	for lo := int64(batch); lo < rows; lo += batch {
		if _, err := d.Add("events", soakRecords(lo, min(rows, lo+batch))); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := d.Optimize("events"); err != nil {
		tb.Fatal(err)
	}
	if other := os.Getenv("MVD_MAINT_SOURCE_DIR"); other != "" {
		moveSource(tb, dir, "events", other)
	}
	if os.Getenv("MVD_MAINT_PIN") != "" {
		// The daemon (this process) on CPU 0, LanceDB's writer on CPU 1.
		pinProcess(tb, 0, 0)
		pinProcess(tb, d.PID(), 1)
	}
	if os.Getenv("MVD_MAINT_REOPEN") == "" {
		// The writer keeps events open, as an application does: opening
		// it for each commit (a listing of thousands of versions and a
		// read of the manifest) made LanceDB's CPU per commit grow 11x
		// over 5,000 commits, on the 2 cores mvd runs on too.
		if err := d.Hold("events"); err != nil {
			tb.Fatal(err)
		}
	}
	if n := writerNice(tb); n != 0 {
		reniceProcess(tb, d.PID(), n)
	}
	if os.Getenv("MVD_MAINT_WRITER_IDLE") != "" {
		idleProcess(tb, d.PID())
	}
	createViews(tb, dir, "events")
	db, err := matview.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	for _, name := range freshViews {
		v, err := db.OpenView(context.Background(), name)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := v.SetMetadata(context.Background(), matview.Retention{KeepFor: 2 * time.Second, Keep: 5}.Metadata()); err != nil {
			tb.Fatal(err)
		}
	}
	if os.Getenv("MVD_MAINT_TRACE") == "" {
		return dir, d, stamped(tb, inProcessServe(tb, dir)), nil
	}
	trace = newMaintTrace()
	return dir, d, stamped(tb, inProcessServeLog(tb, dir, slog.New(trace))), trace
}

// moveSource moves table name of database dir into directory other (on
// another filesystem, such as /dev/shm) and leaves a symbolic link in its
// place (MVD_MAINT_SOURCE_DIR): LanceDB's commits then write to other
// storage than the views' disk, as a writer on another machine does.
// On one virtual disk, the source's writes (a 588 KB manifest per commit
// by the end, left to the kernel's writeback) make every fsync of the
// views wait for the host's flush of them: 20-28 ms stalls that LanceDB's
// own renames meet at the same instants (`perf trace`, run T in
// README.md).
func moveSource(tb testing.TB, dir, name, other string) {
	tb.Helper()
	from := filepath.Join(dir, name+".lance")
	to, err := os.MkdirTemp(other, "mvd-maint-source-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(to) })
	to = filepath.Join(to, name+".lance")
	if err := copyTree(from, to); err != nil {
		tb.Fatalf("move %s to %s: %v", from, to, err)
	}
	if err := os.RemoveAll(from); err != nil {
		tb.Fatal(err)
	}
	if err := os.Symlink(to, from); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("%s: moved to %s", name, to)
}

// writerNice is the nice value LanceDB's writer runs at during the
// commits (MVD_MAINT_WRITER_NICE, default 0).
func writerNice(tb testing.TB) int {
	s := os.Getenv("MVD_MAINT_WRITER_NICE")
	if s == "" {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < -20 || n > 19 {
		tb.Fatalf("MVD_MAINT_WRITER_NICE=%q: want a nice value from -20 to 19", s)
	}
	return n
}

// stamped relays notifications with the time each arrived.
func stamped(tb testing.TB, in <-chan *stream.RefreshNotification) <-chan noteAt {
	out := make(chan noteAt, 1<<16)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case n := <-in:
				out <- noteAt{n, time.Now()}
			case <-stop:
				return
			}
		}
	}()
	tb.Cleanup(func() { close(stop); <-done })
	return out
}

// commitKind is what the i-th commit of a run (counted from 0, in runs of
// a multiple of 20 commits) does to one row: every 20th from the 10th
// deletes one, every 20th from the 20th updates one, the others append.
func commitKind(i int) string {
	switch i % 20 {
	case 9:
		return "delete"
	case 19:
		return "update"
	}
	return "append"
}

// maintCommits makes n single-row LanceDB commits to events (ids from
// next), each waited for in both views and, if interval > 0, each at
// least interval after the one before it started; it returns what it
// measured. seen watches events' manifests; prof, if not nil, profiles.
func maintCommits(tb testing.TB, seen *manifestSeen, d *lancedbtest.Driver, notes <-chan noteAt, next int64, n int, interval time.Duration, prof *maintProfile) maintRun {
	tb.Helper()
	run := maintRun{commits: n, notify: map[string][]time.Duration{}, arrived: map[string][]time.Time{}, fromVisible: map[string][]time.Duration{}}
	start := time.Now()
	for i := 0; i < n; i++ {
		var v uint64
		var err error
		if interval > 0 {
			// A source written at a steady rate: commit i no earlier than
			// its slot, at once when the commit before ran past it.
			pace(start.Add(time.Duration(i) * interval))
		}
		prof.before(tb)
		switch commitKind(i) {
		case "delete":
			v, err = d.Delete("events", fmt.Sprintf("id = %d", next-int64(i)*7-1000))
		case "update":
			var u lancedbtest.UpdateResult
			u, err = d.Update("events", fmt.Sprintf("id = %d", next-int64(i)*7-2000), map[string]string{"amount": "amount + 1"})
			v = u.Version
		default:
			v, err = d.Add("events", []lancedbtest.Record{soakRecord(next + int64(i))})
		}
		if err != nil {
			tb.Fatalf("commit %d: %v", i, err)
		}
		run.returned = append(run.returned, time.Now())
		nas := awaitViews(tb, notes, v)
		visible := seen.when(tb, v)
		run.visible = append(run.visible, visible)
		for view, na := range nas {
			run.notify[view] = append(run.notify[view], na.at.Sub(na.n.SourceCommittedAt))
			run.fromVisible[view] = append(run.fromVisible[view], na.at.Sub(visible))
			run.arrived[view] = append(run.arrived[view], na.at)
			if view == freshViews[0] {
				run.versions = append(run.versions, v)
				run.committed = append(run.committed, na.n.SourceCommittedAt)
			}
		}
		run.last = v
		run.cpu = append(run.cpu, procCPU(tb, 0))
		run.lancedbCPU = append(run.lancedbCPU, procCPU(tb, d.PID()))
		if every := envInt("MVD_MAINT_SOURCE_OPTIMIZE_EVERY", 0); every > 0 && (i+1)%every == 0 {
			// Diagnostic: compact the source too (not measured).
			if _, err := d.Optimize("events"); err != nil {
				tb.Fatal(err)
			}
			ov, err := d.Version("events")
			if err != nil {
				tb.Fatal(err)
			}
			awaitCovered(tb, notes, ov)
		}
		if (i+1)%1000 == 0 {
			note(tb, "%d commits, %v, load average %s", i+1, time.Since(start).Round(time.Second), loadAvg())
		}
	}
	run.wall = time.Since(start)
	return run
}

// awaitViews waits for a notification of each view covering source
// version v and returns, per view, that notification and its arrival:
// freshness is the time from the source commit (its manifest's
// timestamp, which the notification carries) to the arrival.
func awaitViews(tb testing.TB, notes <-chan noteAt, v uint64) map[string]noteAt {
	tb.Helper()
	got := map[string]noteAt{}
	deadline := time.After(60 * time.Second)
	for len(got) < len(freshViews) {
		select {
		case na := <-notes:
			n := na.n
			if n.Error != "" {
				tb.Fatalf("view %s: refresh error: %s", n.View, n.Error)
			}
			if _, ok := got[n.View]; !ok && n.SourceVersion >= v {
				if n.SourceVersion != v || n.SourceCommittedAt.IsZero() {
					tb.Fatalf("view %s: notification for source version %d (committed at %v) covers %d", n.View, n.SourceVersion, n.SourceCommittedAt, v)
				}
				got[n.View] = na
			}
		case <-deadline:
			tb.Fatalf("source version %d: views notified %v after 60s", v, got)
		}
	}
	return got
}

// awaitCovered waits for a notification of each view at source version
// v or later.
func awaitCovered(tb testing.TB, notes <-chan noteAt, v uint64) {
	tb.Helper()
	got := map[string]bool{}
	deadline := time.After(60 * time.Second)
	for len(got) < len(freshViews) {
		select {
		case na := <-notes:
			if na.n.SourceVersion >= v {
				got[na.n.View] = true
			}
		case <-deadline:
			tb.Fatalf("source version %d: views notified %v after 60s", v, got)
		}
	}
}

// viewStorage is what a table holds on disk and in its latest version.
type viewStorage struct {
	fragments, versions int
	dataBytes           int64 // data files the latest version references
	diskBytes           int64 // every file under the table
	manifestBytes       int64 // the latest version's manifest file
}

func storageOf(tb testing.TB, root string) viewStorage {
	tb.Helper()
	ctx := context.Background()
	t, err := lance.Open(ctx, vfs.OS(), root)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := t.Latest(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	refs, err := t.Versions(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	st := viewStorage{fragments: len(m.Fragments), versions: len(refs)}
	for _, r := range refs {
		if r.Version == m.Version {
			if fi, err := os.Stat(filepath.Join(root, "_versions", r.File)); err == nil {
				st.manifestBytes = fi.Size()
			}
		}
	}
	for _, f := range m.Fragments {
		for _, df := range f.Files {
			fi, err := os.Stat(filepath.Join(root, "data", df.Path))
			if err != nil {
				tb.Fatalf("a data file of %s's latest version: %v", root, err)
			}
			st.dataBytes += fi.Size()
		}
	}
	_ = filepath.Walk(root, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			st.diskBytes += fi.Size()
		}
		return nil
	})
	return st
}

// settle waits up to 30 s after the last commit for both views to have
// fewer than 20 fragments and at most 50 versions; it returns how long
// that took and the storage then (or at 30 s).
func settle(tb testing.TB, dir string) (time.Duration, map[string]viewStorage) {
	tb.Helper()
	start := time.Now()
	for {
		out := map[string]viewStorage{}
		ok := true
		for _, name := range freshViews {
			st := storageOf(tb, filepath.Join(dir, name+".lance"))
			out[name] = st
			ok = ok && st.fragments < 20 && st.versions <= 50
		}
		if ok || time.Since(start) > 30*time.Second {
			return time.Since(start), out
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkSettled checks what the issue asks of the views once settled and
// returns LanceDB's optimized copy of all_rows.
func checkSettled(tb testing.TB, dir string, d *lancedbtest.Driver, last uint64, took time.Duration, st map[string]viewStorage) viewStorage {
	tb.Helper()
	for _, name := range freshViews {
		s := st[name]
		note(tb, "%s: %d fragments, %d versions, %d data bytes, %d bytes on disk (latest manifest %d), %v after the last commit", name, s.fragments, s.versions, s.dataBytes, s.diskBytes, s.manifestBytes, took.Round(time.Millisecond))
		if s.fragments >= 20 || s.versions > 50 {
			tb.Errorf("%s: %d fragments and %d versions 30 s after the last commit, want < 20 and <= 50", name, s.fragments, s.versions)
		}
		if err := d.CheckView(name, last); err != nil {
			tb.Errorf("%s: %v", name, err)
		}
		lr, err := d.Refresh(name, lancedbtest.RefreshOptions{})
		if err != nil || lr.Mode != "no_op" {
			tb.Errorf("%s: LanceDB refresh after the run: %+v, %v; want no_op", name, lr, err)
		}
	}
	vers, err := d.Versions("events")
	latest, err2 := d.Version("events")
	if err != nil || err2 != nil || uint64(len(vers)) != latest {
		tb.Errorf("the source holds %d versions (%v, %v), want every one of its %d", len(vers), err, err2, latest)
	}
	spec := lancedbtest.ViewSpec{Select: []lancedbtest.Projection{{Name: "id"}, {Name: "kind"}, {Name: "amount"}}}
	if _, err := d.CreateView("ldb_all_rows", "events", spec); err != nil {
		tb.Fatal(err)
	}
	// The daemon serves this view too: manual, so that LanceDB alone
	// refreshes and optimizes it (set within the daemon's create grace).
	manualView(tb, dir, "ldb_all_rows")
	if _, err := d.Refresh("ldb_all_rows", lancedbtest.RefreshOptions{}); err != nil {
		tb.Fatal(err)
	}
	if _, err := d.Optimize("ldb_all_rows"); err != nil {
		tb.Fatal(err)
	}
	ref := storageOf(tb, filepath.Join(dir, "ldb_all_rows.lance"))
	ratio := float64(st["all_rows"].dataBytes) / float64(ref.dataBytes)
	note(tb, "LanceDB's optimized copy of all_rows: %d fragments, %d data bytes; all_rows holds %.3fx its bytes", ref.fragments, ref.dataBytes, ratio)
	return ref
}

// manualView sets view's auto-refresh policy to manual.
func manualView(tb testing.TB, dir, view string) {
	tb.Helper()
	db, err := matview.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	v, err := db.OpenView(context.Background(), view)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := v.SetMetadata(context.Background(), matview.Policy{Mode: matview.Manual}.Metadata()); err != nil {
		tb.Fatal(err)
	}
}

// freshnessSplit is p50 and p99 of the first and last k notifications of
// view, in ms, measured from the manifest's timestamp.
func freshnessSplit(run maintRun, view string, k int) (first, last [2]float64) {
	return split(run.notify[view], k)
}

// split is p50 and p99 of the first and last k of d, in ms.
func split(d []time.Duration, k int) (first, last [2]float64) {
	k = min(k, len(d)/2)
	a, b := slices.Clone(d[:k]), slices.Clone(d[len(d)-k:])
	slices.Sort(a)
	slices.Sort(b)
	return [2]float64{pct(a, 50), pct(a, 99)}, [2]float64{pct(b, 50), pct(b, 99)}
}

// logFreshness logs the freshness of the first and last k commits from
// both origins: the manifest's timestamp (which LanceDB takes before it
// lists the table's versions and writes the manifest) and the manifest's
// appearance (the commit becoming visible).
func logFreshness(tb testing.TB, run maintRun, k int) {
	tb.Helper()
	for _, view := range freshViews {
		for _, o := range []struct {
			origin string
			d      []time.Duration
		}{{"manifest timestamp", run.notify[view]}, {"manifest appeared", run.fromVisible[view]}} {
			f, l := split(o.d, k)
			note(tb, "%s: source commit (%s) → notification over the first %d commits p50 %.2f ms p99 %.2f ms; over the last %d p50 %.2f ms p99 %.2f ms (x%.2f, x%.2f)",
				view, o.origin, k, f[0], f[1], k, l[0], l[1], l[0]/f[0], l[1]/f[1])
		}
	}
	// CPU per commit: what grows with the source's fragments and
	// versions, and on 2 cores competes with the refreshes.
	n := len(run.cpu)
	if k < 2 || n < 2*k {
		return
	}
	// Wall time per window: a disk's stalls come at a rate in time, so a
	// window that lasts longer meets more of them.
	if len(run.visible) == n {
		note(tb, "wall time, first %d commits %v, last %d %v", k, run.visible[k-1].Sub(run.visible[0]).Round(time.Millisecond), k, run.visible[n-1].Sub(run.visible[n-k]).Round(time.Millisecond))
	}
	per := func(c []time.Duration, lo, hi int) float64 {
		return float64((c[hi] - c[lo]).Microseconds()) / 1000 / float64(hi-lo)
	}
	note(tb, "CPU per commit, first %d → last %d commits: mvd (this process) %.2f → %.2f ms; LanceDB %.2f → %.2f ms",
		k, k, per(run.cpu, 0, k-1), per(run.cpu, n-k, n-1), per(run.lancedbCPU, 0, k-1), per(run.lancedbCPU, n-k, n-1))
}

// TestMaintenanceShort is the CI form: a 10k-row source, 100 commits; the
// views must settle (fragments, versions), hold the right rows and stay
// intact for LanceDB.
func TestMaintenanceShort(t *testing.T) {
	lancedbtest.Require(t)
	rows, commits := envInt("MVD_MAINT_ROWS", 10_000), envInt("MVD_MAINT_COMMITS", 100)
	dir, d, notes, trace := maintSetup(t, int64(rows))
	run := maintCommits(t, watchManifests(t, filepath.Join(dir, "events.lance")), d, notes, int64(rows), commits, envDuration(t, "MVD_MAINT_INTERVAL", 0), nil)
	took, st := settle(t, dir)
	checkSettled(t, dir, d, run.last, took, st)
	trace.correctAppeared(&run)
	logFreshness(t, run, max(30, commits/4))
	trace.logStages(t, run, max(30, commits/4))
}

// maintInterval is BenchmarkMaintenance's pace: a commit every 100 ms
// (10 a second), a rate LanceDB's writer keeps up to the 5,000th commit.
// At a steady rate the first and the last 500 commits last as long (50
// s), so they meet as many of the disk's stalls, which come at a rate in
// time; back to back (MVD_MAINT_INTERVAL=0) the last 500 last 4-5 times
// as long as the first, because LanceDB's own commits slow down as the
// source's versions accumulate, and the ratio measures that.
const maintInterval = 100 * time.Millisecond

// BenchmarkMaintenance is the workload (one iteration whatever
// b.N): a 200k-row source, 2,000 commits, then the settled storage against
// LanceDB's optimized copy; then 3,000 more commits, and freshness over
// the first and last 500 of the 5,000. The commits come every
// maintInterval (MVD_MAINT_INTERVAL: another pace, 0 back to back).
// MVD_MAINT_ROWS and MVD_MAINT_COMMITS scale it down on a small machine.
func BenchmarkMaintenance(b *testing.B) {
	lancedbtest.Require(b)
	rows, commits := envInt("MVD_MAINT_ROWS", 200_000), envInt("MVD_MAINT_COMMITS", 5_000)
	dir, d, notes, trace := maintSetup(b, int64(rows))
	seen := watchManifests(b, filepath.Join(dir, "events.lance"))
	first := min(2_000, commits)
	prof := newMaintProfile(b, commits, min(500, commits/4))
	interval := envDuration(b, "MVD_MAINT_INTERVAL", maintInterval)
	run := maintCommits(b, seen, d, notes, int64(rows), first, interval, prof)
	took, st := settle(b, dir)
	ref := checkSettled(b, dir, d, run.last, took, st)
	b.ReportMetric(float64(st["all_rows"].dataBytes)/float64(ref.dataBytes), "all_rows-bytes/lancedb")
	if err := d.DropTable("ldb_all_rows"); err != nil {
		b.Fatal(err)
	}
	run.add(maintCommits(b, seen, d, notes, int64(rows+first), commits-first, interval, prof))
	prof.stop()
	k := min(500, len(run.notify[freshViews[0]])/4)
	trace.correctAppeared(&run)
	logFreshness(b, run, k)
	trace.logStages(b, run, k)
	for _, view := range freshViews {
		f, l := freshnessSplit(run, view, k)
		b.ReportMetric(l[0]/f[0], view+"-p50-last/first")
		b.ReportMetric(l[1]/f[1], view+"-p99-last/first")
		f, l = split(run.fromVisible[view], k)
		b.ReportMetric(l[0]/f[0], view+"-p50-last/first-from-appeared")
		b.ReportMetric(l[1]/f[1], view+"-p99-last/first-from-appeared")
	}
	_, st = settle(b, dir)
	for _, name := range freshViews {
		note(b, "%s after %d commits: %d fragments, %d versions, latest manifest %d bytes", name, commits, st[name].fragments, st[name].versions, st[name].manifestBytes)
	}
	src := storageOf(b, filepath.Join(dir, "events"+lance.TableSuffix))
	note(b, "events (the source) after %d commits: %d fragments, %d versions, latest manifest %d bytes", commits, src.fragments, src.versions, src.manifestBytes)
}

// note logs a line of the maintenance report: through Logf in a test,
// printed in a benchmark (go test keeps 10 lines of a benchmark's log).
func note(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if _, ok := tb.(*testing.B); ok {
		fmt.Printf(format+"\n", args...)
		return
	}
	tb.Logf(format, args...)
}

// envDuration reads a duration from the environment: def when unset, a
// failed benchmark when it does not parse.
func envDuration(tb testing.TB, name string, def time.Duration) time.Duration {
	tb.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		tb.Fatalf("%s=%q: not a duration", name, s)
	}
	return d
}

// pace blocks until slot, the time a paced writer's next commit is due
// (it returns at once when slot has passed).
func pace(slot time.Time) {
	if d := time.Until(slot); d > 0 {
		time.Sleep(d)
	}
}

// envInt reads a positive integer from the environment, else def.
func envInt(name string, def int) int {
	var n int
	if _, err := fmt.Sscan(os.Getenv(name), &n); err == nil && n > 0 {
		return n
	}
	return def
}
