package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/vfs"
)

// BenchmarkAppendRefresh is the profile of the big append of issue 10: a
// source of MVD_BENCH_APPEND_ROWS rows (default 1M, from the view
// benchmark's cache) gets 100k rows appended by LanceDB before each
// iteration (not timed), then the in-process views V1, V2 and V3 are
// refreshed incrementally, one after the other (timed;
// MVD_BENCH_APPEND_VIEWS=V1,V2 picks some). With
// MVD_BENCH_APPEND_NOSYNC=1 the views are written without fsync (to
// separate the CPU path from the disk). It reports each view's median,
// and the filesystem calls per refresh of all three; -benchmem counts the
// refreshes only, MVD_BENCH_APPEND_CPUPROFILE=FILE profiles the timed
// iterations (LanceDB's writes run in node, so the profile is mvd's).
//
//	go test -run '^$' -bench AppendRefresh -benchtime 10x -benchmem ./bench/
func BenchmarkAppendRefresh(b *testing.B) {
	ctx := context.Background()
	rows := envUint(b, "MVD_BENCH_APPEND_ROWS", 1_000_000)
	dir := b.TempDir()
	d := lancedbtest.StartDriver(b, dir)
	d.Timeout = 30 * time.Minute
	prepareEvents(b, d, viewCacheDir(b), rows, 100_000, 1)
	var base vfs.FS = vfs.OS()
	if os.Getenv("MVD_BENCH_APPEND_NOSYNC") == "1" {
		base = vfs.Unsynced(base)
	}
	tfs := &timingFS{FS: base, stats: map[string]*opStat{}}
	db, err := matview.OpenWith(dir, matview.Options{FS: tfs})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	specs := lancedbtest.EventViews()
	names := lancedbtest.EventViewNames
	if s := os.Getenv("MVD_BENCH_APPEND_VIEWS"); s != "" {
		names = strings.Split(s, ",")
	}
	views := make([]*matview.View, len(names))
	for i, n := range names {
		v, err := db.CreateView(ctx, n, "events", toDefinition(specs[n]))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := v.Refresh(ctx, matview.RefreshOptions{}); err != nil {
			b.Fatal(err)
		}
		views[i] = v
	}
	next := rows
	appendRows := func(seed int) {
		if _, err := d.AppendEvents("events", next, 100_000, seed); err != nil {
			b.Fatal(err)
		}
		next += 100_000
	}
	refreshAll := func(took [][]time.Duration) {
		for i, v := range views {
			t0 := time.Now()
			r, err := v.Refresh(ctx, matview.RefreshOptions{})
			if took != nil {
				took[i] = append(took[i], time.Since(t0))
			}
			if err != nil || r.Mode != matview.ModeIncremental {
				b.Fatalf("refresh %s: %+v %v", names[i], r, err)
			}
		}
	}
	// Warm: plans, indexes and the source handle.
	appendRows(1000)
	refreshAll(nil)
	took := make([][]time.Duration, len(views))
	stop := startProfile(b, os.Getenv("MVD_BENCH_APPEND_CPUPROFILE"))
	defer stop()
	b.ResetTimer()
	var cpu time.Duration
	for i := range b.N {
		b.StopTimer()
		appendRows(2000 + i)
		tfs.enable(true)
		b.StartTimer()
		c0 := cpuTime()
		refreshAll(took)
		cpu += cpuTime() - c0
		b.StopTimer()
		tfs.enable(false)
	}
	// CPU time (user + system, all goroutines) is steadier than wall time
	// on a shared machine.
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	for i, n := range names {
		slices.Sort(took[i])
		b.ReportMetric(float64(took[i][len(took[i])/2].Microseconds())/1000, n+"-p50-ms")
	}
	fmt.Fprintf(os.Stderr, "per iteration, 3 refreshes (load average %s; n=%d):\n%s", loadAvg(), b.N, tfs.table(b.N))
}
