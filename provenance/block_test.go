package provenance

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

// checkModel compares every lookup, the pair order and ViewRows of x with
// model (source → view).
func checkModel(t *testing.T, step int, x *Index, model map[uint64]uint64, probe []uint64, edges bool) {
	t.Helper()
	if x.Len() != len(model) {
		t.Fatalf("step %d: %d pairs, model %d", step, x.Len(), len(model))
	}
	src, view := x.pairs()
	if !slices.IsSorted(src) || len(slices.Compact(slices.Clone(src))) != len(src) {
		t.Fatalf("step %d: source ids not strictly ascending", step)
	}
	for i, s := range src {
		if model[s] != view[i] {
			t.Fatalf("step %d: pair %d -> %d, model %d", step, s, view[i], model[s])
		}
	}
	for i := range x.blocks {
		if x.firsts[i] != x.blocks[i].first() || x.blocks[i].n == 0 || x.blocks[i].n > 2*blockCap {
			t.Fatalf("step %d: block %d: first %d/%d, %d pairs", step, i, x.firsts[i], x.blocks[i].first(), x.blocks[i].n)
		}
	}
	if edges {
		for s := range model { // the neighbours of held rows: block edges
			probe = append(probe, s-1, s+1)
		}
	}
	ids := roaring64.New()
	wantView, wantHeld := roaring64.New(), roaring64.New()
	for _, s := range probe {
		ids.Add(s)
		v, ok := model[s]
		if got, gok := x.Lookup(s); gok != ok || (ok && got != v) {
			t.Fatalf("step %d: lookup %d = %d %v, model %d %v", step, s, got, gok, v, ok)
		}
		if ok {
			wantView.Add(v)
			wantHeld.Add(s)
		}
	}
	gv, gh := x.ViewRows(ids)
	if !gv.Equals(wantView) || !gh.Equals(wantHeld) {
		t.Fatalf("step %d: ViewRows differ from the model", step)
	}
}

// TestBlocksMatchModel drives a many-block index (filtered rows, every
// row, view ids beyond 32 bits apart) through random evictions, updates,
// insertions between held rows and appends, comparing with a map.
func TestBlocksMatchModel(t *testing.T) {
	for _, shape := range []string{"dense", "sparse", "wide"} {
		t.Run(shape, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, uint64(len(shape))))
			model := map[uint64]uint64{}
			var src, view []uint64
			const n = 8_000 // about eight blocks
			for i := range uint64(n) {
				s := i
				if shape != "dense" {
					s = 3*i + uint64(r.IntN(2))
				}
				v := 1000 + i
				if shape == "wide" && i%5 == 0 {
					v = 1<<40 + i
				}
				src, view = append(src, s), append(view, v)
				model[s] = v
			}
			x, err := New(slices.Clone(src), slices.Clone(view), 1)
			if err != nil {
				t.Fatal(err)
			}
			nextView := uint64(1 << 41)
			maxSrc := uint64(3*n + 10)
			for step := range 25 {
				evicted := roaring64.New()
				var added []uint64
				for range r.IntN(300) {
					s := r.Uint64N(maxSrc)
					evicted.Add(s)
					if r.IntN(2) == 0 {
						added = append(added, s) // update (held) or a row entering (not held)
					}
				}
				if step%10 == 0 { // a bulk delete of a range: whole blocks go
					lo := r.Uint64N(maxSrc)
					evicted.AddRange(lo, lo+uint64(r.IntN(5000)))
				}
				for range r.IntN(50) {
					added = append(added, maxSrc) // appended source rows
					maxSrc += uint64(1 + r.IntN(3))
				}
				if r.IntN(4) == 0 {
					added = append(added, added...) // repeated: the last wins
				}
				for _, s := range evicted.ToArray() {
					delete(model, s)
				}
				for i, s := range added {
					model[s] = nextView + uint64(i)
				}
				x.Apply(evicted, added, nextView, uint64(step+2))
				nextView += uint64(len(added))
				probe := make([]uint64, 0, 400)
				for range 400 {
					probe = append(probe, r.Uint64N(maxSrc+5))
				}
				checkModel(t, step, x, model, probe, step%6 == 0)
			}
		})
	}
}

// TestBuilderMatchesNew adds pairs in scan-like orders (ascending runs,
// some rows moved to the end, a shuffled tail) and checks the index equals
// New's, that duplicates are refused, and that a rebuilt all-rows view is
// small.
func TestBuilderMatchesNew(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 5, blockCap - 1, blockCap, 2*blockCap + 1, 20_000} {
		var src []uint64
		for i := range uint64(n) {
			if i%37 != 3 {
				src = append(src, 2*i)
			}
		}
		for i := uint64(3); i < uint64(n); i += 37 {
			src = append(src, 2*i)
		}
		if k := len(src) / 10; k > 1 {
			tail := src[len(src)-k:]
			r.Shuffle(len(tail), func(i, j int) { tail[i], tail[j] = tail[j], tail[i] })
		}
		var b Builder
		b.AddRun(src, 500)
		got, err := b.Index(4)
		if err != nil {
			t.Fatal(err)
		}
		view := make([]uint64, len(src))
		model := map[uint64]uint64{}
		for i, s := range src {
			view[i] = 500 + uint64(i)
			model[s] = view[i]
		}
		want, err := New(slices.Clone(src), view, 4)
		if err != nil {
			t.Fatal(err)
		}
		gs, gv := got.pairs()
		ws, wv := want.pairs()
		if got.Version != 4 || !slices.Equal(gs, ws) || !slices.Equal(gv, wv) {
			t.Fatalf("n=%d: the builder's index differs from New's", n)
		}
		checkModel(t, n, got, model, src, true)
		if n > 0 {
			var d Builder
			d.AddRun(src, 0)
			d.Add(src[len(src)/2], 99)
			if _, err := d.Index(1); err == nil {
				t.Fatalf("n=%d: a source row added twice was accepted", n)
			}
		}
	}
	var b Builder
	for i := range uint64(200_000) {
		b.Add(i, 7+i)
	}
	x, err := b.Index(1)
	if err != nil {
		t.Fatal(err)
	}
	if x.SizeBytes() > 40_000 {
		t.Fatalf("an all-rows index of 200k rows takes %d bytes", x.SizeBytes())
	}
	var f Builder
	for i := range uint64(50_000) {
		f.Add(9*i+i%4, 7+i) // a filter's rows: 4 bytes each
	}
	if x, _ := f.Index(1); x.SizeBytes() > 50_000*4+25_000 {
		t.Fatalf("a filtered index of 50k rows takes %d bytes", x.SizeBytes())
	}
}

// TestBlockEdges looks up the ids just outside and inside every kind of
// block (consecutive, offset, wide source ids) with gaps between blocks.
func TestBlockEdges(t *testing.T) {
	for _, step := range []uint64{1, 3, 1 << 33} {
		var b Builder
		model := map[uint64]uint64{}
		for blk := range uint64(3) {
			base := blk * 10 * blockCap * step // a gap after each block
			for i := range uint64(blockCap) {
				s := base + i*step
				b.Add(s, 100+s)
				model[s] = 100 + s
			}
		}
		x, err := b.Index(1)
		if err != nil {
			t.Fatal(err)
		}
		var probe []uint64
		for s := range model {
			probe = append(probe, s-1, s, s+1)
		}
		checkModel(t, int(step%1000), x, model, probe, true)
	}
}
