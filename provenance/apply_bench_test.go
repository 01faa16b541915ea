package provenance

import "testing"

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
