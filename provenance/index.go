// Package provenance keeps a view's provenance index: for every view row,
// the stable row id of the source row it came from (the view's
// __source_row_id column) mapped to the view row's own stable row id, so
// that an incremental refresh finds the view rows to evict without
// scanning the view.
//
// The view's Lance commit stays the truth: an Index records the view
// version it reflects and is rebuilt from the view (Build) whenever that
// version is not the view's current one or its file is missing or corrupt.
package provenance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/mvd-project/mvd/lance"
)

// SourceRowIDColumn is the view column the index is built from.
const SourceRowIDColumn = "__source_row_id"

// Index maps source row ids to view row ids. It is not safe for concurrent
// use; its owner (one refresher of one view) serializes access.
type Index struct {
	// Version is the view version the index reflects.
	Version uint64
	src     []uint64 // sorted ascending
	view    []uint64 // view[i] is the view row of src[i], or dead
	dead    int      // entries whose view row is dead
}

// dead marks an evicted entry, kept in place until a compaction so that an
// eviction costs a binary search, not a move of the slices' tails. No view
// row has this id.
const dead = ^uint64(0)

// Len returns the number of view rows indexed.
func (x *Index) Len() int { return len(x.src) - x.dead }

// Lookup returns the view row id of a source row id.
func (x *Index) Lookup(src uint64) (uint64, bool) {
	i, ok := slices.BinarySearch(x.src, src)
	if !ok || x.view[i] == dead {
		return 0, false
	}
	return x.view[i], true
}

// Contains reports whether the source row is held by the view.
func (x *Index) Contains(src uint64) bool {
	_, ok := x.Lookup(src)
	return ok
}

// compact drops dead entries.
func (x *Index) compact() {
	if x.dead == 0 {
		return
	}
	ks, kv := x.src[:0], x.view[:0]
	for i, v := range x.view {
		if v != dead {
			ks, kv = append(ks, x.src[i]), append(kv, v)
		}
	}
	x.src, x.view, x.dead = ks, kv, 0
}

// ViewRows returns the view row ids of the source rows in ids that the
// view holds, and those source ids.
func (x *Index) ViewRows(ids *roaring64.Bitmap) (view, held *roaring64.Bitmap) {
	view, held = roaring64.New(), roaring64.New()
	if ids == nil {
		return view, held
	}
	// Few ids: binary search each; many: merge both sorted sequences.
	if ids.GetCardinality()*20 < uint64(len(x.src)) {
		it := ids.Iterator()
		for it.HasNext() {
			s := it.Next()
			if v, ok := x.Lookup(s); ok {
				view.Add(v)
				held.Add(s)
			}
		}
		return view, held
	}
	it := ids.Iterator()
	i := 0
	for it.HasNext() {
		s := it.Next()
		i += sort.Search(len(x.src)-i, func(k int) bool { return x.src[i+k] >= s })
		if i < len(x.src) && x.src[i] == s && x.view[i] != dead {
			view.Add(x.view[i])
			held.Add(s)
		}
	}
	return view, held
}

// Apply removes the source rows in evicted and adds pairs (added[i] is
// the source row of view row firstViewID+i), then records version. Its
// cost follows the change: an evicted row is marked dead in place, a row
// added again (an update) is repointed in place, appended source rows (new,
// larger row ids) go at the end; other insertions move the slices' tails,
// and dead entries are compacted once they are a quarter of the index.
func (x *Index) Apply(evicted *roaring64.Bitmap, added []uint64, firstViewID, version uint64) {
	x.Version = version
	if evicted != nil {
		it := evicted.Iterator()
		for it.HasNext() {
			if j, ok := slices.BinarySearch(x.src, it.Next()); ok && x.view[j] != dead {
				x.view[j] = dead
				x.dead++
			}
		}
	}
	if n := len(x.src); len(added) > 0 && (n == 0 || added[0] > x.src[n-1]) && slices.IsSorted(added) {
		// An append of new source rows, in order: they all go at the end,
		// with no search.
		x.src = append(x.src, added...)
		for i := range added {
			x.view = append(x.view, firstViewID+uint64(i))
		}
		if x.dead > 0 && x.dead*4 > len(x.src) {
			x.compact()
		}
		return
	}
	type pair struct{ s, v uint64 }
	var rest []pair
	for i, s := range added {
		v := firstViewID + uint64(i)
		if j, ok := slices.BinarySearch(x.src, s); ok {
			if x.view[j] == dead {
				x.dead--
			}
			x.view[j] = v
			continue
		}
		rest = append(rest, pair{s, v})
	}
	if x.dead > 0 && x.dead*4 > len(x.src) {
		x.compact()
	}
	if len(rest) == 0 {
		return
	}
	slices.SortFunc(rest, func(a, b pair) int {
		switch {
		case a.s < b.s:
			return -1
		case a.s > b.s:
			return 1
		}
		return 0
	})
	n := len(x.src)
	for _, p := range rest {
		x.src = append(x.src, p.s)
		x.view = append(x.view, p.v)
	}
	if n == 0 || x.src[n-1] < rest[0].s {
		return // all after the existing rows
	}
	// Merge from the back, in place.
	i, j, w := n-1, len(rest)-1, len(x.src)-1
	for j >= 0 {
		if i >= 0 && x.src[i] > rest[j].s {
			x.src[w], x.view[w] = x.src[i], x.view[i]
			i--
		} else {
			x.src[w], x.view[w] = rest[j].s, rest[j].v
			j--
		}
		w--
	}
}

// New returns an index of pairs (src[i] → view[i]) at version; the slices
// are taken over.
func New(src, view []uint64, version uint64) (*Index, error) {
	if len(src) != len(view) {
		return nil, errors.New("provenance: source and view ids differ in length")
	}
	x := &Index{Version: version, src: src, view: view}
	if !slices.IsSorted(src) {
		sortPairs(src, view)
	}
	for i := 1; i < len(x.src); i++ {
		if x.src[i] == x.src[i-1] {
			return nil, fmt.Errorf("provenance: source row %d is held twice by the view", x.src[i])
		}
	}
	return x, nil
}

// sortPairs sorts src ascending and view along with it. A rebuilt view
// holds its rows in source scan order: ascending runs (the fragments, and
// the rows updates moved to later fragments), so a natural merge sort —
// find the runs, merge neighbours until one is left — takes O(n log runs),
// a few passes over the slices where a comparison sort of 5M pairs took
// seconds.
func sortPairs(src, view []uint64) {
	n := len(src)
	bounds := []int{0}
	for i := 1; i < n; i++ {
		if src[i] < src[i-1] {
			bounds = append(bounds, i)
		}
	}
	bounds = append(bounds, n)
	if len(bounds) <= 2 {
		return
	}
	origSrc := src
	bs, bv := make([]uint64, n), make([]uint64, n)
	for len(bounds) > 2 {
		next := []int{0}
		for k := 0; k+1 < len(bounds); k += 2 {
			lo, mid, hi := bounds[k], bounds[k+1], bounds[k+1]
			if k+2 < len(bounds) {
				hi = bounds[k+2]
			}
			mergeRuns(src[lo:mid], view[lo:mid], src[mid:hi], view[mid:hi], bs[lo:hi], bv[lo:hi])
			next = append(next, hi)
		}
		src, bs = bs, src
		view, bv = bv, view
		bounds = next
	}
	if &src[0] != &origSrc[0] {
		copy(bs, src) // the result is in the scratch slices: bs, bv are the caller's
		copy(bv, view)
	}
}

// mergeRuns merges two ascending runs (as, av) and (bs, bv) into (ds, dv).
func mergeRuns(as, av, bs, bv, ds, dv []uint64) {
	i, j, w := 0, 0, 0
	for i < len(as) && j < len(bs) {
		if bs[j] < as[i] {
			ds[w], dv[w] = bs[j], bv[j]
			j++
		} else {
			ds[w], dv[w] = as[i], av[i]
			i++
		}
		w++
	}
	w += copy(ds[w:], as[i:])
	copy(dv[w-(len(as)-i):], av[i:])
	w += copy(ds[w:], bs[j:])
	copy(dv[w-(len(bs)-j):], bv[j:])
}

// Build reads the view's __source_row_id column with its stable row ids at
// version m (one column of the view; the fallback when no valid index is
// at hand).
func Build(ctx context.Context, m *lance.Snapshot) (*Index, error) {
	sc, err := m.Scan(ctx, lance.ScanOptions{Columns: []string{SourceRowIDColumn}, RowMeta: true, BatchSize: 65536})
	if err != nil {
		return nil, fmt.Errorf("build provenance index: %w", err)
	}
	defer sc.Close()
	n := m.LiveRows()
	src, vid := make([]uint64, 0, n), make([]uint64, 0, n)
	for {
		rec, err := sc.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("build provenance index: %w", err)
		}
		s, ok1 := rec.Column(0).(*array.Uint64)
		r, ok2 := rec.Column(int(rec.Schema().FieldIndices(lance.ColRowID)[0])).(*array.Uint64)
		if !ok1 || !ok2 {
			rec.Release()
			return nil, fmt.Errorf("build provenance index: %s is not a uint64 column", SourceRowIDColumn)
		}
		for i := 0; i < s.Len(); i++ {
			if s.IsNull(i) {
				rec.Release()
				return nil, fmt.Errorf("build provenance index: %s is null in view row %d", SourceRowIDColumn, r.Value(i))
			}
			src = append(src, s.Value(i))
			vid = append(vid, r.Value(i))
		}
		rec.Release()
	}
	return New(src, vid, m.Version)
}

// CatchUp brings x from the view version it reflects to m by the view's
// own change set: deleted view rows leave, inserted ones join (their
// __source_row_id taken by row id). A view row updated in place (a direct
// write to the view) cannot be followed: CatchUp fails and the caller
// rebuilds the index.
func CatchUp(ctx context.Context, x *Index, m *lance.Snapshot) error {
	if x.Version == m.Version {
		return nil
	}
	old, err := m.Table().Checkout(ctx, x.Version)
	if err != nil {
		return err
	}
	cs, err := lance.Changes(ctx, old, m)
	if err != nil {
		return err
	}
	if !cs.Updated.IsEmpty() {
		return fmt.Errorf("provenance: %d view rows were updated in place", cs.Updated.GetCardinality())
	}
	x.compact()
	if !cs.Deleted.IsEmpty() {
		ks, kv := x.src[:0], x.view[:0]
		for i, v := range x.view {
			if !cs.Deleted.Contains(v) {
				ks, kv = append(ks, x.src[i]), append(kv, v)
			}
		}
		x.src, x.view = ks, kv
	}
	if !cs.Inserted.IsEmpty() {
		recs, _, err := m.TakeAll(ctx, cs.Inserted, lance.ScanOptions{Columns: []string{SourceRowIDColumn}, RowMeta: true})
		if err != nil {
			return err
		}
		var src, vid []uint64
		for _, r := range recs {
			s, ok1 := r.Column(0).(*array.Uint64)
			v, ok2 := r.Column(int(r.Schema().FieldIndices(lance.ColRowID)[0])).(*array.Uint64)
			if ok1 && ok2 {
				src = append(src, s.Uint64Values()...)
				vid = append(vid, v.Uint64Values()...)
			}
			r.Release()
		}
		add, err := New(src, vid, m.Version)
		if err != nil {
			return err
		}
		merged, err := New(append(x.src, add.src...), append(x.view, add.view...), m.Version)
		if err != nil {
			return err
		}
		*x = *merged
	}
	x.Version = m.Version
	return nil
}
