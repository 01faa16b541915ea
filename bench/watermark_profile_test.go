package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/vfs"
)

// BenchmarkWatermarkRefresh profiles the refreshes of issue 10's short
// cells that only move the watermark: a 1-row delete of the LanceDB-written
// 5M-row events table (BenchmarkViewRefresh's cache; run that once first)
// that V1 and V3 do not hold. The deletes are committed by mvd's own lance
// writer, so no LanceDB process runs beside the refreshes. The refreshes
// carry the pprof label phase=refresh, so a CPU profile can be cut to them:
//
//	go test -run '^$' -bench WatermarkRefresh -benchtime 400x -cpuprofile cpu.out ./bench/
//	go tool pprof -tagfocus phase=refresh bench.test cpu.out
func BenchmarkWatermarkRefresh(b *testing.B) {
	src := filepath.Join(viewCacheDir(b), "events-5000000-100000-1", "events.lance")
	if _, err := os.Stat(src); err != nil {
		b.Skipf("no cached 5M events table (%v): run BenchmarkViewRefresh once", err)
	}
	for _, durability := range []string{vfs.DurabilityFsync, vfs.DurabilityStrict, vfs.DurabilityNone} {
		for _, name := range []string{"V1", "V3"} {
			b.Run(name+"/"+durability, func(b *testing.B) {
				benchWatermark(b, src, name, durability, false)
			})
		}
	}
	// Through one warm `mvd sql --json` process, as BenchmarkViewRefresh's
	// shell column: what the pipes and the second process add.
	for _, name := range []string{"V1", "V3"} {
		b.Run(name+"/"+vfs.DurabilityFsync+"/sql", func(b *testing.B) {
			benchWatermark(b, src, name, vfs.DurabilityFsync, true)
		})
	}
}

func benchWatermark(b *testing.B, src, name, durability string, shell bool) {
	ctx := context.Background()
	dir := b.TempDir()
	if err := copyTree(src, filepath.Join(dir, "events.lance")); err != nil {
		b.Fatal(err)
	}
	db, err := matview.OpenWith(dir, matview.Options{Durability: durability})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	v, err := db.CreateView(ctx, name, "events", toDefinition(lancedbtest.EventViews()[name]))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := v.Refresh(ctx, matview.RefreshOptions{}); err != nil {
		b.Fatal(err)
	}
	refresh := func(ctx context.Context) (*matview.Result, error) { return v.Refresh(ctx, matview.RefreshOptions{}) }
	if shell {
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		sh := startShell(b, buildMVD(b), dir)
		refresh = func(context.Context) (*matview.Result, error) {
			_, _, r, err := sh.refresh(name, false)
			return &r, err
		}
	}
	srcT, err := lance.Open(ctx, vfs.OS(), filepath.Join(dir, "events.lance"))
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	deleted := map[uint64]bool{}
	del := func() {
		m, err := srcT.Latest(ctx)
		if err != nil {
			b.Fatal(err)
		}
		id := rng.Uint64N(5_000_000)
		for deleted[id] {
			id = rng.Uint64N(5_000_000)
		}
		deleted[id] = true
		if _, err := srcT.Commit(ctx, m, &lance.Commit{DeleteRowIDs: roaring64.BitmapOf(id)}); err != nil {
			b.Fatal(err)
		}
	}
	labels := pprof.Labels("phase", "refresh")
	var took []time.Duration
	for i := range b.N + 3 {
		b.StopTimer()
		del()
		syscall.Sync() // as BenchmarkViewRefresh: from a flushed disk
		b.StartTimer()
		t0 := time.Now()
		var r *matview.Result
		pprof.Do(ctx, labels, func(ctx context.Context) { r, err = refresh(ctx) })
		if i >= 3 { // warm-up: the index is built, caches are filled
			took = append(took, time.Since(t0))
		}
		if err != nil || r.Mode != matview.ModeIncremental {
			b.Fatalf("refresh: %+v %v", r, err)
		}
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*9/10].Microseconds())/1000, "p90-ms")
	fmt.Fprintf(os.Stderr, "%s: p50 %.3f ms, min %.3f ms (n=%d, load %s)\n", b.Name(), ms(took[len(took)/2]), ms(took[0]), len(took), loadAvg())
}
