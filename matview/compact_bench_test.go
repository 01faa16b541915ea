package matview

import (
	"context"
	"testing"
	"time"

	"github.com/mvd-project/mvd/vfs"
)

// BenchmarkCompactStep measures what the choice between a separate
// Rewrite commit and folding the rewrite into a refresh commit turns on:
// a view of a 200k-row source with 17 one-row fragments appended by
// refreshes, then one policy compaction step. It reports the step (read
// and rewrite the small fragments, commit), its commit alone, and an
// incremental refresh of one appended row, as ms per operation.
func BenchmarkCompactStep(b *testing.B) {
	ctx := context.Background()
	var step, commit, refresh time.Duration
	var refreshes int
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := b.TempDir()
		src := newGoSource(b, vfs.OS(), dir, "src", 200_000)
		db := openDB(b, dir)
		v, err := db.CreateView(ctx, "v", "src", Definition{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := v.Refresh(ctx, RefreshOptions{}); err != nil {
			b.Fatal(err)
		}
		for j := int64(0); j < 17; j++ {
			src.append(b, 200_000+j, 200_001+j)
			t0 := time.Now()
			if _, err := v.Refresh(ctx, RefreshOptions{}); err != nil {
				b.Fatal(err)
			}
			refresh += time.Since(t0)
			refreshes++
		}
		b.StartTimer()
		r, err := v.Compact(ctx, CompactOptions{Policy: DefaultCompactPolicy()})
		if err != nil || r.Version == 0 || r.FragmentsRemoved != 17 {
			b.Fatalf("compaction step: %+v, %v", r, err)
		}
		step += r.Took
		commit += r.CommitTook
	}
	ms := func(d time.Duration, n int) float64 { return float64(d.Microseconds()) / 1000 / float64(n) }
	b.ReportMetric(ms(step, b.N), "step-ms")
	b.ReportMetric(ms(commit, b.N), "commit-ms")
	b.ReportMetric(ms(refresh, refreshes), "refresh-ms")
}
