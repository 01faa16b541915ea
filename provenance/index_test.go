package provenance

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/vfs"
)

// TestApplyMatchesModel applies random evictions and additions and
// compares with a map.
func TestApplyMatchesModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	model := map[uint64]uint64{}
	x, err := New(nil, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	nextSrc, nextView := uint64(0), uint64(0)
	var gone []uint64
	for step := 0; step < 300; step++ {
		evicted := roaring64.New()
		keys := make([]uint64, 0, len(model))
		for k := range model {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if r.IntN(10) == 0 {
				evicted.Add(k)
			}
		}
		evicted.Add(nextSrc + 1000) // not held: harmless
		var added []uint64
		for _, k := range evicted.ToArray() {
			if _, ok := model[k]; ok && r.IntN(2) == 0 {
				added = append(added, k) // an update: evicted and re-added
			}
		}
		// A row evicted earlier comes back (an update into the filter).
		for _, k := range gone {
			if _, held := model[k]; !held && !evicted.Contains(k) && r.IntN(4) == 0 && !slices.Contains(added, k) {
				added = append(added, k)
			}
		}
		gone = append(gone, evicted.ToArray()...)
		for range r.IntN(20) {
			added = append(added, nextSrc)
			nextSrc += uint64(1 + r.IntN(3))
		}
		// Some re-added old ids not evicted? Never: a held row is evicted first.
		for _, k := range evicted.ToArray() {
			delete(model, k)
		}
		for i, s := range added {
			model[s] = nextView + uint64(i)
		}
		x.Apply(evicted, added, nextView, uint64(step+2))
		nextView += uint64(len(added))
		if x.Len() != len(model) {
			t.Fatalf("step %d: %d pairs, model %d", step, x.Len(), len(model))
		}
		for s, v := range model {
			if got, ok := x.Lookup(s); !ok || got != v {
				t.Fatalf("step %d: source %d -> %d %v, want %d", step, s, got, ok, v)
			}
		}
		if src, _ := x.pairs(); !slices.IsSorted(src) || len(slices.Compact(slices.Clone(src))) != len(src) {
			t.Fatalf("step %d: unsorted", step)
		}
	}
	// Round trip through a file.
	dir := t.TempDir()
	if err := x.Save(vfs.OS(), dir, "inc"); err != nil {
		t.Fatal(err)
	}
	y, err := Load(vfs.OS(), dir, "inc")
	if err != nil {
		t.Fatal(err)
	}
	xs, xv := x.pairs()
	ys, yv := y.pairs()
	if y.Version != x.Version || !slices.Equal(ys, xs) || !slices.Equal(yv, xv) {
		t.Fatal("the saved index differs")
	}
	if _, err := Load(vfs.OS(), dir, "other"); err == nil {
		t.Fatal("loaded another incarnation's index")
	}
}

// TestNewSortsPairs gives New pairs in a rebuilt view's order (sorted but
// for a few rows moved to the end, as updates do, and a shuffled tail) and
// checks every pair survives, sorted by source row id, and that a source
// row held twice is refused.
func TestNewSortsPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 10_000
	src := make([]uint64, 0, n)
	for i := range uint64(n) {
		if i%97 != 5 {
			src = append(src, 2*i)
		}
	}
	for i := uint64(5); i < n; i += 97 {
		src = append(src, 2*i) // moved to the end by an update
	}
	tail := src[n-500:]
	r.Shuffle(len(tail), func(i, j int) { tail[i], tail[j] = tail[j], tail[i] })
	view := make([]uint64, len(src))
	want := map[uint64]uint64{}
	for i, s := range src {
		view[i] = 1_000_000 + uint64(i)
		want[s] = view[i]
	}
	x, err := New(src, view, 3)
	if err != nil {
		t.Fatal(err)
	}
	if xs, _ := x.pairs(); x.Len() != n || !slices.IsSorted(xs) {
		t.Fatalf("%d pairs, sorted %v", x.Len(), slices.IsSorted(xs))
	}
	for s, v := range want {
		if got, ok := x.Lookup(s); !ok || got != v {
			t.Fatalf("source %d -> %d %v, want %d", s, got, ok, v)
		}
	}
	if _, err := New([]uint64{4, 2, 4}, []uint64{1, 2, 3}, 1); err == nil {
		t.Fatal("a source row held twice was accepted")
	}
}

// BenchmarkNewUnsorted builds the index of a 5M-row view whose rows are in
// source order but for 1% moved to the end (updates since the last build).
func BenchmarkNewUnsorted(b *testing.B) {
	const n = 5_000_000
	base := make([]uint64, 0, n)
	for i := range uint64(n) {
		if i%100 != 7 {
			base = append(base, i)
		}
	}
	for i := uint64(7); i < n; i += 100 {
		base = append(base, i)
	}
	src, view := make([]uint64, n), make([]uint64, n)
	for range b.N {
		copy(src, base)
		for i := range view {
			view[i] = uint64(i)
		}
		if _, err := New(src, view, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSortPairsRandom checks the natural merge sort against slices.Sort on
// random inputs of every small length, runs of any count included.
func TestSortPairsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := 0; n < 200; n++ {
		for rep := 0; rep < 5; rep++ {
			src, view := make([]uint64, n), make([]uint64, n)
			for i := range src {
				src[i] = r.Uint64N(uint64(3*n + 1))
				view[i] = src[i]*7 + 1 // the pair travels together
			}
			want := slices.Clone(src)
			slices.Sort(want)
			sortPairs(src, view)
			if !slices.Equal(src, want) {
				t.Fatalf("n=%d: %v, want %v", n, src, want)
			}
			for i := range src {
				if view[i] != src[i]*7+1 {
					t.Fatalf("n=%d: pair %d split", n, i)
				}
			}
		}
	}
}
