package matview

import (
	"context"
	"testing"

	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/vfs"
)

// BenchmarkRefreshAppend100k measures an incremental refresh after a
// 100k-row append to a 1M-row source (mvd-written; no LanceDB needed).
func BenchmarkRefreshAppend100k(b *testing.B) {
	t := &testing.T{}
	ctx := context.Background()
	dir := b.TempDir()
	src := newGoSource(t, vfs.OS(), dir, "src", 1_000_000)
	db, _ := Open(dir)
	sel, _ := plan.ParseSelect("id, name, amount * 100 AS cents")
	v, err := db.CreateView(ctx, "v", "src", Definition{Select: sel, Where: "amount > 10"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := v.Refresh(ctx, RefreshOptions{}); err != nil {
		b.Fatal(err)
	}
	next := int64(1_000_000)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		src.append(t, next, next+100_000)
		next += 100_000
		b.StartTimer()
		r, err := v.Refresh(ctx, RefreshOptions{})
		if err != nil || r.Mode != ModeIncremental {
			b.Fatalf("%+v %v", r, err)
		}
	}
}

// BenchmarkRefreshDelete1 measures an incremental refresh after deleting
// one row of a 2M-row source, on a view holding every row.
func BenchmarkRefreshDelete1(b *testing.B) {
	t := &testing.T{}
	ctx := context.Background()
	dir := b.TempDir()
	src := newGoSource(t, vfs.OS(), dir, "src", 2_000_000)
	db, _ := Open(dir)
	v, err := db.CreateView(ctx, "v", "src", Definition{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := v.Refresh(ctx, RefreshOptions{}); err != nil {
		b.Fatal(err)
	}
	id := int64(12345)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		victim := id
		src.deleteWhere(t, func(x int64) bool { return x != victim })
		id += 7919
		b.StartTimer()
		r, err := v.Refresh(ctx, RefreshOptions{})
		if err != nil || r.Mode != ModeIncremental {
			b.Fatalf("%+v %v", r, err)
		}
	}
}
