package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/internal/mvdbuild"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/serveinfo"
	"github.com/mvd-project/mvd/stream"
)

// The freshness benchmark of issue 11. LanceDB 0.39 makes single-row
// commits to "events" (10k rows); `mvd serve` (the real binary, built into
// a temporary directory) keeps two views fresh: all_rows (every row) and
// filtered (amount >= 50). For every commit it measures, from the moment
// the commit returned in LanceDB:
//   - notify: the refresh notification covering it arriving at a
//     subscriber (stream.SubscribeRefreshes, what `mvd subscribe` reads),
//     for each view;
//   - readable: a LanceDB reader (lancedbtest.StartViewWatcher, polling
//     every 1 ms) seeing the row in all_rows.
// In the same run: LanceDB's own refresh polled every 1 s and in a tight
// loop (lancedbtest.RunFreshnessBaseline), with the CPU each burns, and the
// daemon's CPU (from /proc/PID/stat) while busy and over an idle window.

// freshEnv is one database served by one daemon, observed by one
// subscriber and one LanceDB reader of all_rows.
type freshEnv struct {
	dir     string
	notes   <-chan *stream.RefreshNotification
	watcher *lancedbtest.ViewWatcher
	pid     int    // the daemon's process (0: in this process)
	rows    uint64 // rows in events (and all_rows) before the next phase
	trace   string // the serve log with trace lines ("" when not tracing)
	// db, stateDir and serveArgs, when set, are the daemon's --db (an
	// s3:// URI), --state-dir and further flags (default: dir, dir/.mvd).
	db, stateDir string
	serveArgs    []string
	stopServe    func() // set by startServe

	stopWatch func() (lancedbtest.WatchSummary, error)
}

// noteAt is a notification and when it arrived.
type noteAt struct {
	n  *stream.RefreshNotification
	at time.Time
}

// phase is what one series of commits measured.
type phase struct {
	name             string
	commits          int
	gap              time.Duration
	notify           map[string][]time.Duration // per view, one per commit, sorted
	readable         []time.Duration            // all_rows in LanceDB, sorted
	refreshes        map[string]int             // notifications per view
	lastToConverged  time.Duration              // last commit → both views notified and the row readable
	wall, mvdCPU     time.Duration
	commitMS         lancedbtest.Stats
	notificationErrs []string
	made             []lancedbtest.Commit   // the commits, in order
	arrived          map[string][]time.Time // per view, per commit in made: its notification's arrival
}

var freshViews = []string{"all_rows", "filtered"}

// runPhase makes commits single-row LanceDB commits (every gap, or back to
// back when burst) and waits until every one of them is covered by a
// notification of each view and readable in all_rows.
func runPhase(tb testing.TB, env *freshEnv, name string, commits int, gap time.Duration, burst bool) phase {
	tb.Helper()
	ctx := context.Background()
	w, err := lancedbtest.StartFreshnessWriter(ctx, lancedbtest.HarnessDir(tb), lancedbtest.WriterOptions{Dir: env.dir, Commits: commits, Gap: gap, Burst: burst})
	if err != nil {
		tb.Fatal(err)
	}
	defer w.Kill()
	cpu0 := procCPU(tb, env.pid)
	start := time.Now()
	if err := w.Start(); err != nil {
		tb.Fatal(err)
	}
	var (
		made    []lancedbtest.Commit
		notes   []noteAt
		seen    []lancedbtest.ViewSeen
		top     = map[string]uint64{}
		maxRows uint64
		p       = phase{name: name, commits: commits, gap: gap, notify: map[string][]time.Duration{}, refreshes: map[string]int{}, arrived: map[string][]time.Time{}}
	)
	commitsCh := w.Commits()
	var seenCh <-chan lancedbtest.ViewSeen // nil without a reader: readable is not measured
	if env.watcher != nil {
		seenCh = env.watcher.Seen()
	}
	done := func() bool {
		if commitsCh != nil || len(made) != commits {
			return false
		}
		last := made[len(made)-1].Version
		for _, v := range freshViews {
			if top[v] < last {
				return false
			}
		}
		return env.watcher == nil || maxRows >= env.rows+uint64(commits)
	}
	for !done() {
		select {
		case c, ok := <-commitsCh:
			if !ok {
				commitsCh = nil
				continue
			}
			made = append(made, c)
		case n := <-env.notes:
			notes = append(notes, noteAt{n, time.Now()})
			p.refreshes[n.View]++
			if n.Error != "" {
				p.notificationErrs = append(p.notificationErrs, n.View+": "+n.Error)
			}
			top[n.View] = max(top[n.View], n.SourceVersion)
		case s := <-seenCh:
			seen = append(seen, s)
			maxRows = max(maxRows, s.Rows)
		case <-time.After(60 * time.Second):
			tb.Fatalf("%s: stalled: %d of %d commits made, views at %v, all_rows readable up to %d rows (want %d)", name, len(made), commits, top, maxRows, env.rows+uint64(commits))
		}
	}
	p.wall = time.Since(start)
	p.mvdCPU = procCPU(tb, env.pid) - cpu0
	sum, err := w.Wait()
	if err != nil {
		tb.Fatal(err)
	}
	p.commitMS = sum.CommitMS
	if len(p.notificationErrs) > 0 {
		tb.Fatalf("%s: refresh errors: %v", name, p.notificationErrs)
	}
	// Offline matching: a notification or a reader's look may arrive
	// before the writer's line about the commit does.
	var converged time.Time
	for _, c := range made {
		for _, view := range freshViews {
			at, ok := firstNote(notes, view, c.Version)
			if !ok {
				tb.Fatalf("%s: commit version %d never notified for %s", name, c.Version, view)
			}
			p.notify[view] = append(p.notify[view], at.Sub(c.Returned))
			p.arrived[view] = append(p.arrived[view], at)
			converged = maxTime(converged, at)
		}
		if env.watcher == nil {
			continue
		}
		want := env.rows + uint64(c.Seq) + 1
		i := slices.IndexFunc(seen, func(s lancedbtest.ViewSeen) bool { return s.Rows >= want })
		if i < 0 {
			tb.Fatalf("%s: commit %d (row %d) never readable in all_rows", name, c.Seq, want)
		}
		p.readable = append(p.readable, seen[i].Seen.Sub(c.Returned))
		converged = maxTime(converged, seen[i].Seen)
	}
	p.lastToConverged = converged.Sub(made[len(made)-1].Returned)
	p.made = made
	for _, v := range freshViews {
		slices.Sort(p.notify[v])
	}
	slices.Sort(p.readable)
	env.rows += uint64(commits)
	return p
}

func firstNote(notes []noteAt, view string, version uint64) (time.Time, bool) {
	for _, n := range notes {
		if n.n.View == view && n.n.SourceVersion >= version {
			return n.at, true
		}
	}
	return time.Time{}, false
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// pct is the p-th percentile of sorted (nearest rank), in milliseconds.
func pct(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p/100*float64(len(sorted))+0.999999) - 1
	i = min(max(i, 0), len(sorted)-1)
	return float64(sorted[i].Microseconds()) / 1000
}

// procCPU is the user+system CPU time of process pid (0: this process).
func procCPU(tb testing.TB, pid int) time.Duration {
	tb.Helper()
	p := "/proc/self/stat"
	if pid > 0 {
		p = "/proc/" + strconv.Itoa(pid) + "/stat"
	}
	b, err := os.ReadFile(p)
	if err != nil {
		tb.Fatalf("read %s: %v", p, err)
	}
	// Fields after the parenthesized command: state is field 3; utime and
	// stime are fields 14 and 15, in clock ticks (USER_HZ = 100 on Linux).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		tb.Fatalf("parse %s: %q", p, s)
	}
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// setupFreshness creates events (10k rows, by LanceDB) and the two views
// (by matview, refreshed once so they start current) in a new directory.
func setupFreshness(tb testing.TB, rows uint64) *freshEnv {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	w, err := lancedbtest.StartFreshnessWriter(ctx, lancedbtest.HarnessDir(tb), lancedbtest.WriterOptions{Dir: dir, Create: rows, Commits: 0})
	if err != nil {
		tb.Fatal(err)
	}
	w.Kill() // it has created the table and waits for "go"
	createViews(tb, dir, "events")
	db, err := matview.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	for _, name := range freshViews {
		v, err := db.OpenView(ctx, name)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := v.Refresh(ctx, matview.RefreshOptions{}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
	return &freshEnv{dir: dir, rows: rows}
}

// watch starts the LanceDB reader of all_rows (polling every 1 ms).
func (env *freshEnv) watch(tb testing.TB) {
	tb.Helper()
	w, err := lancedbtest.StartViewWatcher(context.Background(), lancedbtest.HarnessDir(tb), env.dir, "all_rows", time.Millisecond)
	if err != nil {
		tb.Fatal(err)
	}
	if w.Rows != env.rows {
		tb.Fatalf("all_rows has %d rows before the commits, want %d", w.Rows, env.rows)
	}
	env.watcher = w
	var once sync.Once
	env.stopWatch = func() (lancedbtest.WatchSummary, error) {
		var s lancedbtest.WatchSummary
		err := errors.New("already stopped")
		once.Do(func() { s, err = w.Stop() })
		return s, err
	}
	tb.Cleanup(func() { env.stopWatch() })
}

var (
	mvdOnce sync.Once
	mvdBin  string
	mvdErr  error
)

// buildMVD builds cmd/mvd once per test binary into workDir.
func buildMVD(tb testing.TB) string {
	tb.Helper()
	mvdOnce.Do(func() {
		mvdBin, mvdErr = mvdbuild.Build(workDir)
	})
	if mvdErr != nil {
		tb.Fatal(mvdErr)
	}
	return mvdBin
}

// startServe runs `mvd serve` on dir and returns once it is ready, with a
// subscriber attached. It is stopped (SIGTERM) at test end.
func startServe(tb testing.TB, bin string, env *freshEnv) {
	tb.Helper()
	db, state := env.dir, filepath.Join(env.dir, ".mvd")
	if env.db != "" {
		db, state = env.db, env.stateDir
	}
	args := append([]string{"serve", "--db", db, "--state-dir", state}, env.serveArgs...)
	args = append(args, "--admin-addr", "127.0.0.1:0", "--log-level", "warn")
	logPath := filepath.Join(tb.TempDir(), "serve.log")
	if env.trace = traceLog(tb); env.trace != "" {
		args = append(args[:len(args)-1], "debug", "--log-format", "json")
		logPath = env.trace
	}
	cmd := exec.Command(bin, args...)
	logf, err := os.Create(logPath)
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		logf.Close()
	}
	tb.Cleanup(stop)
	env.stopServe = stop
	deadline := time.Now().Add(60 * time.Second)
	var info serveinfo.Info
	for {
		info, err = serveinfo.Read(state)
		if err == nil && info.PID == cmd.Process.Pid {
			if r, err := http.Get("http://" + info.AdminAddr + "/readyz"); err == nil {
				r.Body.Close()
				if r.StatusCode == http.StatusOK {
					break
				}
			}
		}
		select {
		case err := <-exited:
			log, _ := os.ReadFile(logf.Name())
			tb.Fatalf("mvd serve exited: %v\n%s", err, log)
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("mvd serve not ready after 60s (serve.json: %v)", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	env.pid = cmd.Process.Pid
	notes, closeSub := subscribe(tb, info.NATSURL, info.Token)
	tb.Cleanup(closeSub) // runs before stop (LIFO)
	env.notes = notes
}

// TestFreshnessSmoke is the CI form: the in-process daemon, a few commits
// at a gap and a few back to back; every commit must be notified for both
// views and readable by LanceDB in all_rows. No timing is asserted.
func TestFreshnessSmoke(t *testing.T) {
	env := setupFreshness(t, 1000)
	env.notes = inProcessServe(t, env.dir)
	env.watch(t)
	for _, ph := range []phase{
		runPhase(t, env, "gap", 5, 20*time.Millisecond, false),
		runPhase(t, env, "back-to-back", 20, 0, true),
	} {
		for _, v := range freshViews {
			if len(ph.notify[v]) != ph.commits || ph.refreshes[v] == 0 {
				t.Errorf("%s: view %s: %d commits notified, %d refreshes", ph.name, v, len(ph.notify[v]), ph.refreshes[v])
			}
		}
		t.Logf("%s: %d commits, refreshes %v, notify p50 %.1f ms, readable p50 %.1f ms", ph.name, ph.commits, ph.refreshes, pct(ph.notify["all_rows"], 50), pct(ph.readable, 50))
	}
	checkFilteredView(t, env.dir)
}

// checkFilteredView checks, with LanceDB's query engine, that both views
// equal their definitions at their watermarks.
func checkFilteredView(tb testing.TB, dir string) {
	tb.Helper()
	d := lancedbtest.StartDriver(tb, dir)
	for _, v := range freshViews {
		if err := d.CheckViewAtWatermark(v); err != nil {
			tb.Errorf("view %s: %v", v, err)
		}
	}
}

// BenchmarkFreshness is the full benchmark (one iteration whatever b.N;
// ≈ 2–3 minutes): 200 commits 50 ms apart, 200 back to back, a burst of
// 1,000, the daemon's idle CPU, then LanceDB's baselines on a copy of the
// workload.
//
//	go test -run '^$' -bench Freshness -benchtime 1x ./bench/
func BenchmarkFreshness(b *testing.B) {
	const commits = 200
	const gap = 50 * time.Millisecond
	for range b.N {
		bin := buildMVD(b)
		env := setupFreshness(b, 10_000)
		startServe(b, bin, env)
		env.watch(b)
		load0 := loadAvg()
		phases := []phase{
			runPhase(b, env, "gap 50 ms", commits, gap, false),
			runPhase(b, env, "back-to-back", commits, 0, true),
			runPhase(b, env, "burst 1000", 1000, 0, true),
		}
		if _, err := env.stopWatch(); err != nil {
			b.Logf("watcher: %v", err)
		}
		if env.trace != "" {
			t, err := readServeTrace(env.trace)
			if err != nil {
				b.Fatal(err)
			}
			for _, v := range freshViews {
				fmt.Print(traceStages(t, phases[0], v))
			}
		}
		// Idle: nothing commits, nobody reads.
		const idle = 10 * time.Second
		cpu0 := procCPU(b, env.pid)
		time.Sleep(idle)
		idleCPU := procCPU(b, env.pid) - cpu0
		checkFilteredView(b, env.dir)

		ctx := context.Background()
		var base []*lancedbtest.FreshnessBaseline
		for _, poll := range []time.Duration{time.Second, 0} {
			r, err := lancedbtest.RunFreshnessBaseline(ctx, lancedbtest.HarnessDir(b), lancedbtest.FreshnessOptions{Dir: b.TempDir(), Rows: 10_000, Commits: commits, Gap: gap, Poll: poll})
			if err != nil {
				b.Fatal(err)
			}
			base = append(base, r)
		}
		report(b, phases, base, idleCPU, idle, load0+" → "+loadAvg())
	}
}

func report(b *testing.B, phases []phase, base []*lancedbtest.FreshnessBaseline, idleCPU, idle time.Duration, load string) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "\nfreshness, %s, load average %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), load)
	fmt.Fprintf(&sb, "%-34s %8s %8s %8s %10s %10s %12s\n", "", "commits", "p50 ms", "p99 ms", "refreshes", "CPU cores", "last→conv ms")
	for _, p := range phases {
		cores := p.mvdCPU.Seconds() / p.wall.Seconds()
		for _, v := range freshViews {
			fmt.Fprintf(&sb, "%-34s %8d %8.1f %8.1f %10d %10.3f %12.1f\n", "mvd "+p.name+" notify "+v, p.commits, pct(p.notify[v], 50), pct(p.notify[v], 99), p.refreshes[v], cores, float64(p.lastToConverged.Microseconds())/1000)
		}
		fmt.Fprintf(&sb, "%-34s %8d %8.1f %8.1f %10s %10s %12s\n", "mvd "+p.name+" readable in LanceDB", p.commits, pct(p.readable, 50), pct(p.readable, 99), "", "", "")
		fmt.Fprintf(&sb, "%-34s %8s %8.1f %8.1f\n", "  (LanceDB commit itself)", "", p.commitMS.P50, p.commitMS.P99)
	}
	for _, r := range base {
		fmt.Fprintf(&sb, "%-34s %8d %8.1f %8.1f %10d %10.3f\n", "LanceDB refresh "+r.Mode, r.Commits, r.Latency.P50, r.Latency.P99, r.Refreshes, r.PollerCPUCores)
	}
	idleCores := idleCPU.Seconds() / idle.Seconds()
	fmt.Fprintf(&sb, "mvd serve idle CPU: %.2f%% of a core over %v\n", idleCores*100, idle)
	g := phases[0]
	for _, r := range base {
		mvdCores := g.mvdCPU.Seconds() / g.wall.Seconds()
		fmt.Fprintf(&sb, "LanceDB %s / mvd (> 1: mvd fresher): notify p50 %.2f, p99 %.2f; readable p50 %.2f, p99 %.2f; CPU mvd/LanceDB %.2f (%.3f vs %.3f cores)\n",
			r.Mode, r.Latency.P50/pct(g.notify["all_rows"], 50), r.Latency.P99/pct(g.notify["all_rows"], 99),
			r.Latency.P50/pct(g.readable, 50), r.Latency.P99/pct(g.readable, 99),
			mvdCores/r.PollerCPUCores, mvdCores, r.PollerCPUCores)
	}
	fmt.Print(sb.String())
	b.ReportMetric(pct(g.notify["all_rows"], 50), "notify-p50-ms")
	b.ReportMetric(pct(g.notify["all_rows"], 99), "notify-p99-ms")
	b.ReportMetric(pct(g.readable, 50), "readable-p50-ms")
	b.ReportMetric(pct(g.readable, 99), "readable-p99-ms")
	b.ReportMetric(idleCores*100, "idle-cpu-%")
	burst := phases[len(phases)-1]
	b.ReportMetric(float64(burst.lastToConverged.Microseconds())/1000, "burst-converge-ms")
	b.ReportMetric(float64(burst.refreshes["all_rows"]), "burst-refreshes")
	if len(base) > 0 {
		b.ReportMetric(base[0].Latency.P50/pct(g.notify["all_rows"], 50), "p50-vs-lancedb-1s")
	}
}
