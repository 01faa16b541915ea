package bench

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/vfs"
)

// BenchmarkRebuildProfile times full rebuilds of the three benchmark views
// over a copy of the cached events table (MVD_BENCH_REBUILD_SRC, a
// directory holding events.lance), with the filesystem calls counted and
// timed; MVD_BENCH_REBUILD_CPUPROFILE=FILE profiles the rebuilds,
// MVD_BENCH_REBUILD_ONLY=v1|v2|v3 runs one view's. It skips
// without a source.
//
//	MVD_BENCH_REBUILD_SRC=.cache/bench-views/events-1000000-100000-1 \
//	  go test -run '^$' -bench RebuildProfile -benchtime 3x ./bench/
func BenchmarkRebuildProfile(b *testing.B) {
	src := os.Getenv("MVD_BENCH_REBUILD_SRC")
	if src == "" {
		b.Skip("MVD_BENCH_REBUILD_SRC not set")
	}
	ctx := context.Background()
	dir := b.TempDir()
	if out, err := exec.Command("cp", "-r", src+"/events.lance", dir+"/").CombinedOutput(); err != nil {
		b.Fatalf("copy source: %v %s", err, out)
	}
	tfs := &timingFS{FS: vfs.OS(), stats: map[string]*opStat{}}
	db, err := matview.OpenWith(dir, matview.Options{FS: tfs})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	lim := uint64(1000)
	defs := []struct {
		name, sel, where string
		limit            *uint64
	}{
		{"v1", "id, user, amount*100 AS amount_cents", "kind = 'purchase' AND amount > 10", nil},
		{"v2", "id, kind, amount", "", nil},
		{"v3", "id, user, amount", "kind = 'refund' AND amount > 50", &lim},
	}
	views := make([]*matview.View, len(defs))
	for i, d := range defs {
		sel, err := plan.ParseSelect(d.sel)
		if err != nil {
			b.Fatal(err)
		}
		v, err := db.CreateView(ctx, d.name, "events", matview.Definition{Select: sel, Where: d.where, Limit: d.limit})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := v.Refresh(ctx, matview.RefreshOptions{}); err != nil {
			b.Fatal(err)
		}
		views[i] = v
	}
	if f := os.Getenv("MVD_BENCH_REBUILD_CPUPROFILE"); f != "" {
		out, err := os.Create(f)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.StartCPUProfile(out); err != nil {
			b.Fatal(err)
		}
		defer func() { pprof.StopCPUProfile(); out.Close() }()
	}
	took := make([]time.Duration, len(views))
	var peak uint64
	b.ResetTimer()
	for range b.N {
		for i, v := range views {
			if only := os.Getenv("MVD_BENCH_REBUILD_ONLY"); only != "" && only != defs[i].name {
				continue
			}
			runtime.GC()
			tfs.enable(i == 2)
			t0 := time.Now()
			if _, err := v.Refresh(ctx, matview.RefreshOptions{Full: true}); err != nil {
				b.Fatal(err)
			}
			took[i] += time.Since(t0)
			tfs.enable(false)
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapSys-ms.HeapReleased)
		}
	}
	for i, d := range defs {
		b.ReportMetric(float64(took[i].Microseconds())/1000/float64(b.N), d.name+"-ms")
	}
	b.ReportMetric(float64(peak)/1e6, "heap-held-MB")
	b.Logf("V3 per refresh:\n%s", tfs.table(b.N))
}
