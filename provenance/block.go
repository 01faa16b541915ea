package provenance

import (
	"math"
	"slices"
)

// blockCap is the number of pairs a block is cut at: small enough that
// re-encoding a block for a change is cheap, large enough that the
// per-block overhead (about 100 bytes) is small beside its pairs.
const blockCap = 1024

// pair is one source row id and the view row holding it.
type pair struct{ s, v uint64 }

// block holds up to 2*blockCap pairs with ascending source ids. Each
// side is stored as compactly as its values allow: nothing when they
// are consecutive (a rebuild's view rows, a source's untouched rows),
// 32-bit offsets from a base when they fit, raw values otherwise. So a
// view of all source rows costs a few bytes per block, a filtered one 4
// bytes per row, where a pair of uint64s took 16.
type block struct {
	src  column
	view column
	n    int
}

// column is one side of a block's pairs.
type column struct {
	base uint64   // first (src) or smallest (view) value
	off  []uint32 // values as offsets from base; nil with wide nil: base+i
	wide []uint64 // the values themselves, when offsets overflow
}

func (c *column) at(i int) uint64 {
	switch {
	case c.off != nil:
		return c.base + uint64(c.off[i])
	case c.wide != nil:
		return c.wide[i]
	}
	return c.base + uint64(i)
}

// encodeColumn stores vals (non-empty) as compactly as they allow.
func encodeColumn(vals []uint64) column {
	lo, hi := vals[0], vals[0]
	consecutive := true
	for i, v := range vals {
		lo, hi = min(lo, v), max(hi, v)
		if v != vals[0]+uint64(i) {
			consecutive = false
		}
	}
	switch {
	case consecutive:
		return column{base: vals[0]}
	case hi-lo <= math.MaxUint32:
		off := make([]uint32, len(vals))
		for i, v := range vals {
			off[i] = uint32(v - lo)
		}
		return column{base: lo, off: off}
	}
	return column{base: lo, wide: slices.Clone(vals)}
}

// newBlock encodes pairs (non-empty, ascending source ids).
func newBlock(src, view []uint64) block {
	return block{src: encodeColumn(src), view: encodeColumn(view), n: len(src)}
}

func (b *block) first() uint64 { return b.src.at(0) }

// find returns the position of source id s in the block.
func (b *block) find(s uint64) (int, bool) {
	c := &b.src
	switch {
	case c.off != nil:
		if s < c.base || s-c.base > math.MaxUint32 {
			return 0, false
		}
		return slices.BinarySearch(c.off, uint32(s-c.base))
	case c.wide != nil:
		return slices.BinarySearch(c.wide, s)
	}
	if s < c.base || s-c.base >= uint64(b.n) {
		return 0, false
	}
	return int(s - c.base), true
}

// appendPairs appends the block's pairs to dst.
func (b *block) appendPairs(dst []pair) []pair {
	for i := range b.n {
		dst = append(dst, pair{b.src.at(i), b.view.at(i)})
	}
	return dst
}

// encodeBlocks cuts pairs (ascending source ids) into blocks of blockCap,
// the last one taking up to 2*blockCap, and appends them to dst.
func encodeBlocks(dst []block, ps []pair) []block {
	var src, view []uint64
	for len(ps) > 0 {
		k := len(ps)
		if k > 2*blockCap {
			k = blockCap
		}
		src, view = src[:0], view[:0]
		for _, p := range ps[:k] {
			src, view = append(src, p.s), append(view, p.v)
		}
		dst = append(dst, newBlock(src, view))
		ps = ps[k:]
	}
	return dst
}
