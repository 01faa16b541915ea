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
		if !slices.IsSorted(x.src) || len(slices.Compact(slices.Clone(x.src))) != len(x.src) {
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
	x.compact()
	if y.Version != x.Version || !slices.Equal(y.src, x.src) || !slices.Equal(y.view, x.view) {
		t.Fatal("the saved index differs")
	}
	if _, err := Load(vfs.OS(), dir, "other"); err == nil {
		t.Fatal("loaded another incarnation's index")
	}
}
