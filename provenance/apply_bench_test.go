package provenance

import (
	"testing"

	"github.com/mvd-project/mvd/vfs"
)

// BenchmarkApplyAppend appends 100k new source rows to a 1M-row index.
func BenchmarkApplyAppend(b *testing.B) {
	const n, add = 1_000_000, 100_000
	src, view := make([]uint64, n), make([]uint64, n)
	for i := range src {
		src[i], view[i] = uint64(i), uint64(i)
	}
	x, err := New(src, view, 1)
	if err != nil {
		b.Fatal(err)
	}
	added := make([]uint64, add)
	next := uint64(n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range added {
			added[j] = next + uint64(j)
		}
		x.Apply(nil, added, next, uint64(i+2))
		next += add
	}
}

// BenchmarkSave writes the index of a 5M-row view, as a cleanup did every
// second under the daemon before saves were paced by their cost
// (matview.indexSaveDue).
func BenchmarkSave(b *testing.B) {
	const n = 5_000_000
	src, view := make([]uint64, n), make([]uint64, n)
	for i := range src {
		src[i], view[i] = uint64(i)*3, uint64(i) // a filter keeps every third row
	}
	x, err := New(src, view, 1)
	if err != nil {
		b.Fatal(err)
	}
	fsys, root := vfs.OS(), b.TempDir()
	for b.Loop() {
		if err := x.Save(fsys, root, "inc"); err != nil {
			b.Fatal(err)
		}
	}
}
