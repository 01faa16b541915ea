package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/vfs/s3fs/s3fstest"
)

// BenchmarkFreshnessS3 is freshness with the database on S3 against the
// same on local disk (issue 23): LanceDB makes single-row commits to
// events (10k rows) 250 ms apart (40: one refresh per commit), 50 ms
// apart (200) and back to back (200), `mvd serve` (the real
// binary; on local disk with fsnotify, on S3 polling at its default
// interval) keeps all_rows and filtered fresh, and each commit's time to
// its refresh notification is measured. The S3 endpoint is gofakes3 in
// this process on loopback, so the figures are mvd's cost over a fast
// store, not a network's. Also: the S3 requests of the idle daemon per
// second, by kind (5 s after the phases, over 5 s). One iteration
// whatever b.N (about a minute and a half).
//
//	go test -run '^$' -bench FreshnessS3 -benchtime 1x ./bench/
func BenchmarkFreshnessS3(b *testing.B) {
	const commits = 200
	const gap = 50 * time.Millisecond
	for range b.N {
		bin := buildMVD(b)
		load0 := loadAvg()
		local := setupFreshness(b, 10_000)
		startServe(b, bin, local)
		localPhases := []phase{
			runPhase(b, local, "gap 250 ms", 40, 250*time.Millisecond, false),
			runPhase(b, local, "gap 50 ms", commits, gap, false),
			runPhase(b, local, "back-to-back", commits, 0, true),
		}
		local.stopServe()

		srv := s3fstest.Start(b, "bkt")
		for k, v := range map[string]string{"AWS_ENDPOINT": srv.Endpoint, "AWS_ALLOW_HTTP": "true", "AWS_REGION": "us-east-1",
			"AWS_ACCESS_KEY_ID": s3fstest.AccessKeyID, "AWS_SECRET_ACCESS_KEY": s3fstest.SecretAccessKey} {
			b.Setenv(k, v) // LanceDB, matview here and mvd serve read them
		}
		remote := setupFreshnessAt(b, "s3://bkt/fresh", 10_000)
		remote.db, remote.stateDir = remote.dir, filepath.Join(b.TempDir(), "state")
		startServe(b, bin, remote)
		s3Phases := []phase{
			runPhase(b, remote, "gap 250 ms", 40, 250*time.Millisecond, false),
			runPhase(b, remote, "gap 50 ms", commits, gap, false),
			runPhase(b, remote, "back-to-back", commits, 0, true),
		}
		// Idle: nothing commits; what the watcher asks of the store,
		// once the views' maintenance after the phases (compaction of
		// their one-row fragments, cleanup) has settled.
		const idle = 5 * time.Second
		time.Sleep(5 * time.Second)
		srv.Reset()
		time.Sleep(idle)
		kinds := map[string]int{}
		reqs := srv.Requests()
		for _, r := range reqs {
			kinds[r.Kind()]++
		}
		remote.stopServe()
		reportS3(b, localPhases, s3Phases, kinds, len(reqs), idle, load0+" → "+loadAvg())
	}
}

// setupFreshnessAt is setupFreshness on the database db (an s3:// URI):
// events by LanceDB, the two views by matview, refreshed once.
func setupFreshnessAt(tb testing.TB, db string, rows uint64) *freshEnv {
	tb.Helper()
	ctx := context.Background()
	w, err := lancedbtest.StartFreshnessWriter(ctx, lancedbtest.HarnessDir(tb), lancedbtest.WriterOptions{Dir: db, Create: rows, Commits: 0})
	if err != nil {
		tb.Fatal(err)
	}
	w.Kill()
	createViews(tb, db, "events")
	mdb, err := matview.Open(db)
	if err != nil {
		tb.Fatal(err)
	}
	for _, name := range freshViews {
		v, err := mdb.OpenView(ctx, name)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := v.Refresh(ctx, matview.RefreshOptions{}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := mdb.Close(); err != nil {
		tb.Fatal(err)
	}
	return &freshEnv{dir: db, rows: rows}
}

func reportS3(b *testing.B, local, s3 []phase, kinds map[string]int, total int, idle time.Duration, load string) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "\nfreshness S3 vs local disk, %s, load average %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), load)
	fmt.Fprintf(&sb, "%-40s %8s %8s %8s %10s %10s\n", "", "commits", "p50 ms", "p99 ms", "refreshes", "CPU cores")
	for i, set := range [][]phase{local, s3} {
		where := []string{"local", "S3"}[i]
		for _, p := range set {
			cores := p.mvdCPU.Seconds() / p.wall.Seconds()
			for _, v := range freshViews {
				fmt.Fprintf(&sb, "%-40s %8d %8.1f %8.1f %10d %10.3f\n", where+" "+p.name+" notify "+v, p.commits, pct(p.notify[v], 50), pct(p.notify[v], 99), p.refreshes[v], cores)
			}
			fmt.Fprintf(&sb, "%-40s %8s %8.1f %8.1f\n", "  (LanceDB commit itself)", "", p.commitMS.P50, p.commitMS.P99)
		}
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	var by []string
	for _, k := range names {
		by = append(by, fmt.Sprintf("%s %.1f/s", k, float64(kinds[k])/idle.Seconds()))
	}
	fmt.Fprintf(&sb, "S3 requests of the idle daemon (1 source, 2 views): %.1f/s (%s)\n", float64(total)/idle.Seconds(), strings.Join(by, ", "))
	fmt.Print(sb.String())
	for i, set := range [][]phase{local, s3} {
		where := []string{"local", "s3"}[i]
		b.ReportMetric(pct(set[0].notify["all_rows"], 50), where+"-gap250-p50-ms")
		b.ReportMetric(pct(set[1].notify["all_rows"], 50), where+"-gap50-p50-ms")
		b.ReportMetric(pct(set[1].notify["all_rows"], 99), where+"-gap50-p99-ms")
	}
	b.ReportMetric(float64(total)/idle.Seconds(), "s3-idle-req/s")
}
