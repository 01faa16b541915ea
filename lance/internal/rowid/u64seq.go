package rowid

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"sort"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// segment is one decoded U64Segment. Positions are 0-based within the
// segment. Implementations never expand a range into memory.
type segment interface {
	len() uint64
	// at returns the value at position i < len().
	at(i uint64) uint64
	// addTo adds the values at positions [lo, hi) to bm.
	addTo(bm *roaring64.Bitmap, lo, hi uint64)
	// each calls fn for the values at positions [lo, hi), in order.
	each(lo, hi uint64, fn func(v uint64))
	// find returns the position of value v, if the segment holds it.
	find(v uint64) (pos uint64, ok bool)
	// bounds returns lo <= every value < hi (an envelope, maybe loose).
	bounds() (lo, hi uint64)
}

// decodeSegment validates and decodes one U64Segment.
func decodeSegment(s *tablepb.U64Segment) (segment, error) {
	switch k := s.GetSegment().(type) {
	case *tablepb.U64Segment_Range_:
		start, end := k.Range.GetStart(), k.Range.GetEnd()
		if end < start {
			return nil, corruptf("range segment %d..%d is reversed", start, end)
		}
		return rangeSeg{start, end}, nil
	case *tablepb.U64Segment_RangeWithHoles_:
		start, end := k.RangeWithHoles.GetStart(), k.RangeWithHoles.GetEnd()
		if end < start {
			return nil, corruptf("range-with-holes segment %d..%d is reversed", start, end)
		}
		holes, err := decodeU64Array(k.RangeWithHoles.GetHoles())
		if err != nil {
			return nil, err
		}
		for i, h := range holes {
			if h < start || h >= end || (i > 0 && h <= holes[i-1]) {
				return nil, corruptf("hole %d of range %d..%d is out of range or out of order", h, start, end)
			}
		}
		return holesSeg{start: start, end: end, holes: holes}, nil
	case *tablepb.U64Segment_RangeWithBitmap_:
		return newBitmapSeg(k.RangeWithBitmap.GetStart(), k.RangeWithBitmap.GetEnd(), k.RangeWithBitmap.GetBitmap())
	case *tablepb.U64Segment_SortedArray:
		vals, err := decodeU64Array(k.SortedArray)
		if err != nil {
			return nil, err
		}
		for i := 1; i < len(vals); i++ {
			if vals[i] <= vals[i-1] {
				return nil, corruptf("sorted array segment is not strictly increasing at %d", i)
			}
		}
		return newArraySeg(vals, true), nil
	case *tablepb.U64Segment_Array:
		vals, err := decodeU64Array(k.Array)
		if err != nil {
			return nil, err
		}
		return newArraySeg(vals, false), nil
	case nil:
		if len(s.ProtoReflect().GetUnknown()) > 0 {
			return nil, unsupportedf("unknown u64 segment kind")
		}
		return nil, corruptf("empty u64 segment")
	default:
		return nil, unsupportedf("u64 segment kind %T", k)
	}
}

// decodeU64Array expands an EncodedU64Array.
func decodeU64Array(a *tablepb.EncodedU64Array) ([]uint64, error) {
	switch k := a.GetArray().(type) {
	case *tablepb.EncodedU64Array_U16Array_:
		b := k.U16Array.GetOffsets()
		if len(b)%2 != 0 {
			return nil, corruptf("u16 array of %d bytes", len(b))
		}
		out := make([]uint64, len(b)/2)
		for i := range out {
			out[i] = k.U16Array.GetBase() + uint64(binary.LittleEndian.Uint16(b[2*i:]))
		}
		return out, nil
	case *tablepb.EncodedU64Array_U32Array_:
		b := k.U32Array.GetOffsets()
		if len(b)%4 != 0 {
			return nil, corruptf("u32 array of %d bytes", len(b))
		}
		out := make([]uint64, len(b)/4)
		for i := range out {
			out[i] = k.U32Array.GetBase() + uint64(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return out, nil
	case *tablepb.EncodedU64Array_U64Array_:
		b := k.U64Array.GetValues()
		if len(b)%8 != 0 {
			return nil, corruptf("u64 array of %d bytes", len(b))
		}
		out := make([]uint64, len(b)/8)
		for i := range out {
			out[i] = binary.LittleEndian.Uint64(b[8*i:])
		}
		return out, nil
	case nil:
		if a != nil && len(a.ProtoReflect().GetUnknown()) > 0 {
			return nil, unsupportedf("unknown u64 array encoding")
		}
		return nil, nil // an absent array is empty
	default:
		return nil, unsupportedf("u64 array encoding %T", k)
	}
}

// rangeSeg is start..end, end exclusive.
type rangeSeg struct{ start, end uint64 }

func (s rangeSeg) len() uint64        { return s.end - s.start }
func (s rangeSeg) at(i uint64) uint64 { return s.start + i }
func (s rangeSeg) addTo(bm *roaring64.Bitmap, lo, hi uint64) {
	if lo < hi {
		bm.AddRange(s.start+lo, s.start+hi)
	}
}
func (s rangeSeg) each(lo, hi uint64, fn func(uint64)) {
	for i := lo; i < hi; i++ {
		fn(s.start + i)
	}
}
func (s rangeSeg) find(v uint64) (uint64, bool) {
	if v < s.start || v >= s.end {
		return 0, false
	}
	return v - s.start, true
}
func (s rangeSeg) bounds() (uint64, uint64) { return s.start, s.end }

// holesSeg is start..end minus sorted holes.
type holesSeg struct {
	start, end uint64
	holes      []uint64
}

func (s holesSeg) len() uint64 { return s.end - s.start - uint64(len(s.holes)) }

// at finds the i-th present value: the smallest v with v-start-holes(<v) == i.
func (s holesSeg) at(i uint64) uint64 {
	// holes before the answer: the largest k with holes[k-1]-start-(k-1) <= i.
	k := sort.Search(len(s.holes), func(k int) bool {
		return s.holes[k]-s.start-uint64(k) > i
	})
	return s.start + i + uint64(k)
}

// find: v's position is v-start minus the holes below v.
func (s holesSeg) find(v uint64) (uint64, bool) {
	if v < s.start || v >= s.end {
		return 0, false
	}
	k, hole := slices.BinarySearch(s.holes, v)
	if hole {
		return 0, false
	}
	return v - s.start - uint64(k), true
}

func (s holesSeg) bounds() (uint64, uint64) { return s.start, s.end }

func (s holesSeg) addTo(bm *roaring64.Bitmap, lo, hi uint64) {
	if lo >= hi {
		return
	}
	first, last := s.at(lo), s.at(hi-1)
	bm.AddRange(first, last+1)
	for _, h := range s.holes {
		if h > first && h < last {
			bm.Remove(h)
		}
	}
}

func (s holesSeg) each(lo, hi uint64, fn func(uint64)) {
	if lo >= hi {
		return
	}
	v := s.at(lo)
	k := sort.Search(len(s.holes), func(k int) bool { return s.holes[k] > v })
	for n := hi - lo; n > 0; v++ {
		if k < len(s.holes) && s.holes[k] == v {
			k++
			continue
		}
		fn(v)
		n--
	}
}

// bitmapSeg keeps start+i for every set bit i, LSB first within a byte.
type bitmapSeg struct {
	start, end uint64
	bits       []byte
	n          uint64
	rank       []uint64 // rank[w] = set bits in bytes [0, 8w)
}

func newBitmapSeg(start, end uint64, b []byte) (segment, error) {
	if end < start {
		return nil, corruptf("range-with-bitmap segment %d..%d is reversed", start, end)
	}
	span := end - start
	if uint64(len(b)) != (span+7)/8 {
		return nil, corruptf("range-with-bitmap segment %d..%d has a %d-byte bitmap", start, end, len(b))
	}
	if r := span % 8; r != 0 && b[len(b)-1]>>r != 0 {
		return nil, corruptf("range-with-bitmap segment %d..%d has padding bits set", start, end)
	}
	s := &bitmapSeg{start: start, end: end, bits: b, rank: make([]uint64, len(b)/8+1)}
	for w := 0; w < len(b)/8; w++ {
		s.rank[w+1] = s.rank[w] + uint64(bits.OnesCount64(binary.LittleEndian.Uint64(b[8*w:])))
	}
	s.n = s.rank[len(b)/8]
	for _, x := range b[len(b)/8*8:] {
		s.n += uint64(bits.OnesCount8(x))
	}
	return s, nil
}

func (s *bitmapSeg) len() uint64 { return s.n }

func (s *bitmapSeg) at(i uint64) uint64 {
	w := sort.Search(len(s.rank), func(w int) bool { return s.rank[w] > i }) - 1
	left := i - s.rank[w]
	for p := 8 * w; p < len(s.bits); p++ {
		c := uint64(bits.OnesCount8(s.bits[p]))
		if left < c {
			x := s.bits[p]
			for ; left > 0; left-- {
				x &= x - 1 // clear the lowest set bit
			}
			return s.start + uint64(p)*8 + uint64(bits.TrailingZeros8(x))
		}
		left -= c
	}
	return s.end // unreachable for i < len()
}

// find: v's position is the rank of its bit.
func (s *bitmapSeg) find(v uint64) (uint64, bool) {
	if v < s.start || v >= s.end {
		return 0, false
	}
	off := v - s.start
	if s.bits[off/8]>>(off%8)&1 == 0 {
		return 0, false
	}
	w := off / 64
	rank := s.rank[w]
	for p := w * 8; p < off/8; p++ {
		rank += uint64(bits.OnesCount8(s.bits[p]))
	}
	rank += uint64(bits.OnesCount8(s.bits[off/8] & (1<<(off%8) - 1)))
	return rank, true
}

func (s *bitmapSeg) bounds() (uint64, uint64) { return s.start, s.end }

func (s *bitmapSeg) addTo(bm *roaring64.Bitmap, lo, hi uint64) {
	s.each(lo, hi, func(v uint64) { bm.Add(v) })
}

func (s *bitmapSeg) each(lo, hi uint64, fn func(uint64)) {
	if lo >= hi {
		return
	}
	v := s.at(lo)
	for n := hi - lo; n > 0; v++ {
		off := v - s.start
		if s.bits[off/8]>>(off%8)&1 == 1 {
			fn(v)
			n--
		}
	}
}

// arraySeg lists the values; sorted ones are searched by bisection,
// unsorted ones through an index built at decode time.
type arraySeg struct {
	vals   []uint64
	sorted bool
	index  map[uint64]uint64 // value -> position, for unsorted arrays
	lo, hi uint64
}

func newArraySeg(vals []uint64, sorted bool) *arraySeg {
	s := &arraySeg{vals: vals, sorted: sorted}
	if len(vals) == 0 {
		return s
	}
	s.lo, s.hi = vals[0], vals[0]
	for _, v := range vals {
		s.lo, s.hi = min(s.lo, v), max(s.hi, v)
	}
	s.hi++ // exclusive; a value of MaxUint64 wraps and disables the envelope
	if !sorted {
		s.index = make(map[uint64]uint64, len(vals))
		for i, v := range vals {
			s.index[v] = uint64(i)
		}
	}
	return s
}

func (s *arraySeg) len() uint64        { return uint64(len(s.vals)) }
func (s *arraySeg) at(i uint64) uint64 { return s.vals[i] }
func (s *arraySeg) addTo(bm *roaring64.Bitmap, lo, hi uint64) {
	if lo < hi {
		bm.AddMany(s.vals[lo:hi])
	}
}
func (s *arraySeg) each(lo, hi uint64, fn func(uint64)) {
	for _, v := range s.vals[lo:hi] {
		fn(v)
	}
}
func (s *arraySeg) find(v uint64) (uint64, bool) {
	if s.sorted {
		i, ok := slices.BinarySearch(s.vals, v)
		return uint64(i), ok
	}
	i, ok := s.index[v]
	return i, ok
}
func (s *arraySeg) bounds() (uint64, uint64) {
	if s.hi == 0 && len(s.vals) > 0 {
		return 0, ^uint64(0)
	}
	return s.lo, s.hi
}

// U64Sequence is a decoded RowIdSequence: a fragment's stable row ids in
// physical row order, deleted rows included. It is immutable.
type U64Sequence struct {
	segs []segment
	ends []uint64 // ends[i] = positions covered by segs[0..i]
}

// DecodeRowIDSequence decodes a serialized RowIdSequence.
func DecodeRowIDSequence(b []byte) (*U64Sequence, error) {
	var pb tablepb.RowIdSequence
	if err := unmarshal(b, &pb); err != nil {
		return nil, corruptf("row id sequence: %v", err)
	}
	seq := &U64Sequence{}
	var total uint64
	for i, ps := range pb.GetSegments() {
		s, err := decodeSegment(ps)
		if err != nil {
			return nil, wrapf(err, "row id segment %d", i)
		}
		n := s.len()
		if total+n < total {
			return nil, corruptf("row id sequence length overflows")
		}
		total += n
		seq.segs = append(seq.segs, s)
		seq.ends = append(seq.ends, total)
	}
	return seq, nil
}

// Len returns the number of row ids.
func (q *U64Sequence) Len() uint64 {
	if len(q.ends) == 0 {
		return 0
	}
	return q.ends[len(q.ends)-1]
}

// At returns the row id at position i < Len().
func (q *U64Sequence) At(i uint64) uint64 {
	k := sort.Search(len(q.ends), func(k int) bool { return q.ends[k] > i })
	return q.segs[k].at(i - q.segStart(k))
}

func (q *U64Sequence) segStart(k int) uint64 {
	if k == 0 {
		return 0
	}
	return q.ends[k-1]
}

// AddRange adds the row ids at positions [lo, hi) to bm.
func (q *U64Sequence) AddRange(bm *roaring64.Bitmap, lo, hi uint64) {
	q.visit(lo, hi, func(s segment, a, b uint64) { s.addTo(bm, a, b) })
}

// Each calls fn with the row ids at positions [lo, hi), in order.
func (q *U64Sequence) Each(lo, hi uint64, fn func(id uint64)) {
	q.visit(lo, hi, func(s segment, a, b uint64) { s.each(a, b, fn) })
}

// Gather sets dst[i] to the value at position pos[i], for ascending
// positions below Len (dst as long as pos): one pass over the segments.
func (q *U64Sequence) Gather(pos, dst []uint64) {
	k := 0
	for i, p := range pos {
		for q.ends[k] <= p {
			k++
		}
		dst[i] = q.segs[k].at(p - q.segStart(k))
	}
}

// visit calls fn for the part of each segment overlapping [lo, hi).
func (q *U64Sequence) visit(lo, hi uint64, fn func(s segment, a, b uint64)) {
	hi = min(hi, q.Len())
	if lo >= hi {
		return
	}
	k := sort.Search(len(q.ends), func(k int) bool { return q.ends[k] > lo })
	for ; k < len(q.segs) && q.segStart(k) < hi; k++ {
		s0 := q.segStart(k)
		fn(q.segs[k], max(lo, s0)-s0, min(hi, q.ends[k])-s0)
	}
}

// Find returns the position of row id v in the sequence, if present.
func (q *U64Sequence) Find(v uint64) (pos uint64, ok bool) {
	for k, s := range q.segs {
		if lo, hi := s.bounds(); v < lo || v >= hi {
			continue
		}
		if p, ok := s.find(v); ok {
			return q.segStart(k) + p, true
		}
	}
	return 0, false
}

// FindEach calls fn with the position of every id of ids the sequence
// holds, segment by segment, skipping segments whose bounds exclude the
// ids: its cost follows the ids asked for and the segment count, not the
// sequence's length.
func (q *U64Sequence) FindEach(ids *roaring64.Bitmap, fn func(id, pos uint64)) {
	for k, s := range q.segs {
		lo, hi := s.bounds()
		base := q.segStart(k)
		it := ids.Iterator()
		it.AdvanceIfNeeded(lo)
		for it.HasNext() {
			id := it.Next()
			if id >= hi {
				break
			}
			if pos, ok := s.find(id); ok {
				fn(id, base+pos)
			}
		}
	}
}

// Overlaps reports whether some id of ids lies within the bounds of a
// segment of the sequence: false means the sequence holds none of them.
// It costs a search of ids per segment.
func (q *U64Sequence) Overlaps(ids *roaring64.Bitmap) bool {
	for _, s := range q.segs {
		lo, hi := s.bounds()
		if lo >= hi {
			continue
		}
		it := ids.Iterator()
		it.AdvanceIfNeeded(lo)
		if it.HasNext() && it.PeekNext() < hi {
			return true
		}
	}
	return false
}

// Within reports whether every id of the sequence is in ids. A range
// segment costs two rank queries; other segments are walked.
func (q *U64Sequence) Within(ids *roaring64.Bitmap) bool {
	for _, s := range q.segs {
		if r, ok := s.(rangeSeg); ok {
			if r.len() == 0 {
				continue
			}
			below := uint64(0)
			if r.start > 0 {
				below = ids.Rank(r.start - 1)
			}
			if ids.Rank(r.end-1)-below != r.len() {
				return false
			}
			continue
		}
		in := true
		s.each(0, s.len(), func(v uint64) {
			if in && !ids.Contains(v) {
				in = false
			}
		})
		if !in {
			return false
		}
	}
	return true
}

// Footprint estimates the bytes the decoded sequence holds, for caches
// that bound what they keep.
func (q *U64Sequence) Footprint() uint64 {
	n := uint64(48 + 8*len(q.ends))
	for _, s := range q.segs {
		switch s := s.(type) {
		case rangeSeg:
			n += 32
		case holesSeg:
			n += 48 + 8*uint64(len(s.holes))
		case *bitmapSeg:
			n += 64 + uint64(len(s.bits)) + 8*uint64(len(s.rank))
		case *arraySeg:
			n += 64 + 8*uint64(len(s.vals)) + 24*uint64(len(s.index))
		default:
			n += 64
		}
	}
	return n
}
