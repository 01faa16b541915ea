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
	"math"
	"slices"
	"unsafe"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/mvd-project/mvd/lance"
)

// SourceRowIDColumn is the view column the index is built from.
const SourceRowIDColumn = "__source_row_id"

// Index maps source row ids to view row ids. It is not safe for concurrent
// use; its owner (one refresher of one view) serializes access.
//
// The pairs are kept sorted by source id in blocks of about blockCap
// pairs, each side stored as compactly as its values allow (see block):
// a rebuilt view of every source row costs a few bytes per thousand rows,
// a filtered one about 4 bytes per row. A lookup is two binary searches;
// a change re-encodes only the blocks it touches.
type Index struct {
	// Version is the view version the index reflects.
	Version uint64
	blocks  []block
	firsts  []uint64 // firsts[i] is blocks[i]'s smallest source id
	n       int
}

// Len returns the number of view rows indexed.
func (x *Index) Len() int { return x.n }

// SizeBytes estimates the memory the index holds.
func (x *Index) SizeBytes() int {
	const perBlock = int(unsafe.Sizeof(block{})) + 8
	n := len(x.blocks) * perBlock
	for i := range x.blocks {
		b := &x.blocks[i]
		n += 4*(len(b.src.off)+len(b.view.off)) + 8*(len(b.src.wide)+len(b.view.wide))
	}
	return n
}

// locate returns the block whose range holds source id s: the last one
// starting at or before s (the first block for smaller ids), -1 without
// blocks.
func (x *Index) locate(s uint64) int {
	i, _ := slices.BinarySearch(x.firsts, s+1) // first block starting after s
	return max(i-1, min(0, len(x.firsts)-1))
}

// Lookup returns the view row id of a source row id.
func (x *Index) Lookup(src uint64) (uint64, bool) {
	bi := x.locate(src)
	if bi < 0 {
		return 0, false
	}
	b := &x.blocks[bi]
	i, ok := b.find(src)
	if !ok {
		return 0, false
	}
	return b.view.at(i), true
}

// Contains reports whether the source row is held by the view.
func (x *Index) Contains(src uint64) bool {
	_, ok := x.Lookup(src)
	return ok
}

// Sources returns the source row ids the view holds.
func (x *Index) Sources() *roaring64.Bitmap {
	out := roaring64.New()
	for i := range x.blocks {
		b := &x.blocks[i]
		for j := range b.n {
			out.Add(b.src.at(j))
		}
	}
	return out
}

// each calls fn for every pair in source id order.
func (x *Index) each(fn func(s, v uint64)) {
	for i := range x.blocks {
		b := &x.blocks[i]
		for j := range b.n {
			fn(b.src.at(j), b.view.at(j))
		}
	}
}

// pairs returns every pair as two slices, sorted by source id.
func (x *Index) pairs() (src, view []uint64) {
	src, view = make([]uint64, 0, x.n), make([]uint64, 0, x.n)
	x.each(func(s, v uint64) { src, view = append(src, s), append(view, v) })
	return src, view
}

// ViewRows returns the view row ids of the source rows in ids that the
// view holds, and those source ids.
func (x *Index) ViewRows(ids *roaring64.Bitmap) (view, held *roaring64.Bitmap) {
	view, held = roaring64.New(), roaring64.New()
	if ids == nil || len(x.blocks) == 0 {
		return view, held
	}
	// The ids ascend: a cursor over the blocks moves only forward.
	it := ids.Iterator()
	bi := 0
	for it.HasNext() {
		s := it.Next()
		for bi+1 < len(x.firsts) && x.firsts[bi+1] <= s {
			if bi+8 < len(x.firsts) && x.firsts[bi+8] <= s {
				bi = x.locate(s) // far ahead: search
				break
			}
			bi++
		}
		b := &x.blocks[bi]
		if i, ok := b.find(s); ok {
			view.Add(b.view.at(i))
			held.Add(s)
		}
	}
	return view, held
}

// Apply removes the source rows in evicted and adds pairs (added[i] is
// the source row of view row firstViewID+i; a row both evicted and added,
// an update, keeps the added pair), then records version. Its cost
// follows the change: only the blocks the changed source ids fall in are
// re-encoded.
func (x *Index) Apply(evicted *roaring64.Bitmap, added []uint64, firstViewID, version uint64) {
	x.Version = version
	adds := make([]pair, len(added))
	for i, s := range added {
		adds[i] = pair{s, firstViewID + uint64(i)}
	}
	var evs []uint64
	if evicted != nil {
		evs = evicted.ToArray()
	}
	_ = x.merge(evs, adds, false)
}

// merge removes the source ids evs (ascending) and adds the pairs adds
// (any order; of one source id the last wins) block by block. With strict,
// an added source id already held (or added twice) is an error and the
// index is left as it was.
func (x *Index) merge(evs []uint64, adds []pair, strict bool) error {
	if !slices.IsSortedFunc(adds, cmpPair) {
		slices.SortStableFunc(adds, cmpPair)
	}
	if k := dedupeLast(adds); k != len(adds) {
		if strict {
			return fmt.Errorf("provenance: source row %d is held twice by the view", firstDup(adds))
		}
		adds = adds[:k]
	}
	if len(x.blocks) == 0 {
		x.blocks = encodeBlocks(nil, adds)
		x.n = len(adds)
		x.refirst()
		return nil
	}
	var changes []blockChange
	var scratch []pair
	grown := false
	n := x.n
	for len(evs) > 0 || len(adds) > 0 {
		var s uint64
		switch {
		case len(evs) == 0:
			s = adds[0].s
		case len(adds) == 0:
			s = evs[0]
		default:
			s = min(evs[0], adds[0].s)
		}
		bi := x.locate(s)
		end := uint64(math.MaxUint64)
		last := bi+1 == len(x.firsts)
		if !last {
			end = x.firsts[bi+1]
		}
		ne := 0
		for ne < len(evs) && (last || evs[ne] < end) {
			ne++
		}
		na := 0
		for na < len(adds) && (last || adds[na].s < end) {
			na++
		}
		b := &x.blocks[bi]
		scratch = b.appendPairs(scratch[:0])
		out, removed, dup := mergePairs(scratch, evs[:ne], adds[:na])
		if dup && strict {
			return fmt.Errorf("provenance: a source row is held twice by the view")
		}
		n += len(out) - b.n
		_ = removed
		nb := encodeBlocks(nil, out)
		if len(nb) != 1 {
			grown = true
		}
		changes = append(changes, blockChange{bi, nb})
		evs, adds = evs[ne:], adds[na:]
	}
	x.n = n
	x.install(changes, grown)
	return nil
}

// blockChange is the blocks that replace block bi after a merge.
type blockChange struct {
	bi     int
	blocks []block
}

// install replaces the changed blocks (changes in ascending bi): in place
// when each is still one block, else by rebuilding the block list.
func (x *Index) install(changes []blockChange, grown bool) {
	if !grown {
		for _, c := range changes {
			x.blocks[c.bi] = c.blocks[0]
			x.firsts[c.bi] = c.blocks[0].first()
		}
		return
	}
	out := make([]block, 0, len(x.blocks)+len(changes))
	prev := 0
	for _, c := range changes {
		out = append(out, x.blocks[prev:c.bi]...)
		out = append(out, c.blocks...)
		prev = c.bi + 1
	}
	x.blocks = append(out, x.blocks[prev:]...)
	x.refirst()
}

// refirst recomputes firsts from the blocks.
func (x *Index) refirst() {
	x.firsts = x.firsts[:0]
	for i := range x.blocks {
		x.firsts = append(x.firsts, x.blocks[i].first())
	}
}

// mergePairs returns cur (ascending) without the source ids evs and with
// adds (ascending, distinct) merged in, an added pair replacing a held
// one; dup reports an added source id that was held and not evicted.
func mergePairs(cur []pair, evs []uint64, adds []pair) (out []pair, removed int, dup bool) {
	out = make([]pair, 0, len(cur)+len(adds))
	i, j, k := 0, 0, 0
	for i < len(cur) || k < len(adds) {
		if k == len(adds) || (i < len(cur) && cur[i].s < adds[k].s) {
			p := cur[i]
			i++
			for j < len(evs) && evs[j] < p.s {
				j++
			}
			if j < len(evs) && evs[j] == p.s {
				removed++
				continue
			}
			out = append(out, p)
			continue
		}
		a := adds[k]
		k++
		if i < len(cur) && cur[i].s == a.s {
			for j < len(evs) && evs[j] < a.s {
				j++
			}
			if j == len(evs) || evs[j] != a.s {
				dup = true
			}
			i++ // replaced
		}
		out = append(out, a)
	}
	return out, removed, dup
}

func cmpPair(a, b pair) int {
	switch {
	case a.s < b.s:
		return -1
	case a.s > b.s:
		return 1
	}
	return 0
}

// dedupeLast drops all but the last pair of each source id from ps
// (sorted, stable) and returns the new length.
func dedupeLast(ps []pair) int {
	w := 0
	for i := range ps {
		if i+1 < len(ps) && ps[i+1].s == ps[i].s {
			continue
		}
		ps[w] = ps[i]
		w++
	}
	return w
}

func firstDup(ps []pair) uint64 {
	for i := 1; i < len(ps); i++ {
		if ps[i].s == ps[i-1].s {
			return ps[i].s
		}
	}
	return 0
}

// New returns an index of pairs (src[i] → view[i]) at version. The slices
// may be reordered and are not kept.
func New(src, view []uint64, version uint64) (*Index, error) {
	if len(src) != len(view) {
		return nil, errors.New("provenance: source and view ids differ in length")
	}
	if !slices.IsSorted(src) {
		sortPairs(src, view)
	}
	for i := 1; i < len(src); i++ {
		if src[i] == src[i-1] {
			return nil, fmt.Errorf("provenance: source row %d is held twice by the view", src[i])
		}
	}
	x := &Index{Version: version, n: len(src)}
	for lo := 0; lo < len(src); {
		hi := len(src)
		if hi-lo > 2*blockCap {
			hi = lo + blockCap
		}
		x.blocks = append(x.blocks, newBlock(src[lo:hi], view[lo:hi]))
		lo = hi
	}
	x.refirst()
	return x, nil
}

// Builder makes an index from pairs given one at a time, in any order but
// cheapest in ascending source order (a rebuild writes its rows in source
// scan order): those are encoded as they come, so the builder holds about
// what the index will; the others wait and are merged in at the end.
// The zero Builder is ready to use.
type Builder struct {
	blocks []block
	cs, cv []uint64 // the ascending pairs not yet in a block
	last   uint64
	any    bool
	rest   []pair // pairs that came out of order
	n      int
}

// Add adds the pair src → view.
func (b *Builder) Add(src, view uint64) {
	if b.any && src <= b.last {
		b.rest = append(b.rest, pair{src, view})
		return
	}
	b.last, b.any = src, true
	b.cs, b.cv = append(b.cs, src), append(b.cv, view)
	b.n++
	if len(b.cs) == blockCap {
		b.blocks = append(b.blocks, newBlock(b.cs, b.cv))
		b.cs, b.cv = b.cs[:0], b.cv[:0]
	}
}

// AddRun adds src[i] → firstView+i for every i: view rows written in order.
func (b *Builder) AddRun(src []uint64, firstView uint64) {
	for i, s := range src {
		b.Add(s, firstView+uint64(i))
	}
}

// Len returns the number of pairs added.
func (b *Builder) Len() int { return b.n + len(b.rest) }

// Index returns the index of the pairs added, at version; it fails when a
// source id was added twice. The builder is empty afterwards.
func (b *Builder) Index(version uint64) (*Index, error) {
	if len(b.cs) > 0 {
		b.blocks = append(b.blocks, newBlock(b.cs, b.cv))
	}
	x := &Index{Version: version, blocks: b.blocks, n: b.n}
	x.refirst()
	rest := b.rest
	*b = Builder{}
	if len(rest) > 0 {
		if err := x.merge(nil, rest, true); err != nil {
			return nil, err
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
	var bld Builder
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
			bld.Add(s.Value(i), r.Value(i))
		}
		rec.Release()
	}
	return bld.Index(m.Version)
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
	if cs.IsEmpty() {
		// Commits that kept every row where it was (an index build, a
		// metadata change): the pairs hold as they are.
		x.Version = m.Version
		return nil
	}
	var bld Builder
	x.each(func(s, v uint64) {
		if !cs.Deleted.Contains(v) {
			bld.Add(s, v)
		}
	})
	if !cs.Inserted.IsEmpty() {
		recs, _, err := m.TakeAll(ctx, cs.Inserted, lance.ScanOptions{Columns: []string{SourceRowIDColumn}, RowMeta: true})
		if err != nil {
			return err
		}
		for _, r := range recs {
			s, ok1 := r.Column(0).(*array.Uint64)
			v, ok2 := r.Column(int(r.Schema().FieldIndices(lance.ColRowID)[0])).(*array.Uint64)
			if ok1 && ok2 {
				for i := range s.Len() {
					bld.Add(s.Value(i), v.Value(i))
				}
			}
			r.Release()
		}
	}
	y, err := bld.Index(m.Version)
	if err != nil {
		return err
	}
	*x = *y
	return nil
}
