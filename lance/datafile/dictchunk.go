package datafile

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// ReadFieldChunkDict is ReadFieldChunk for a string or binary field whose
// page holding start is stored dictionary-encoded (a flat, all-valid
// mini-block page with a dictionary, as LanceDB writes low-cardinality
// strings): it returns the page's rows from start as an Arrow dictionary
// array (int32 indices over the page's dictionary, whose values have type
// dt) without expanding them, so a predicate can be evaluated once per
// dictionary item rather than once per row. ok is false, with nothing
// read, when the page is stored otherwise; the caller then reads the
// chunk with ReadFieldChunk.
func (r *Reader) ReadFieldChunkDict(ctx context.Context, fieldID int32, dt arrow.DataType, start uint64, mem memory.Allocator) (arr arrow.Array, lo, hi uint64, ok bool, err error) {
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
	default:
		return nil, 0, 0, false, nil
	}
	if r.legacy != nil || (r.major == 2 && r.minor == 0) {
		return nil, 0, 0, false, nil
	}
	if start >= r.numRows {
		return nil, 0, 0, false, fmt.Errorf("read %s field %d at row %d: file has %d rows", r.name, fieldID, start, r.numRows)
	}
	node, found := r.tree.byID[fieldID]
	if !found || node.f.ParentID >= 0 || len(node.children) != 0 {
		return nil, 0, 0, false, nil
	}
	c := node.column
	if r.colErr[c] != nil {
		return nil, 0, 0, false, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, 0, false, err
	}
	s, err := r.pageStarts(c)
	if err != nil {
		return nil, 0, 0, false, decodeErr(r.name, fmt.Errorf("read %s %v: %w", r.name, node, err))
	}
	p := sort.Search(len(s)-1, func(i int) bool { return s[i+1] > start })
	if p >= len(s)-1 {
		return nil, 0, 0, false, nil
	}
	layout, src, err := r.pageLayout(c, p)
	if err != nil {
		return nil, 0, 0, false, decodeErr(r.name, fmt.Errorf("read %s %v column %d page %d: %w", r.name, node, c, p, err))
	}
	mb := layout.GetMiniBlockLayout()
	if mb == nil || mb.Dictionary == nil || mb.RepCompression != nil || mb.DefCompression != nil {
		return nil, 0, 0, false, nil
	}
	a, err := decodeDictPage(mb, src, s[p+1]-s[p], start-s[p], dt, r.limits, mem)
	if err != nil {
		return nil, 0, 0, false, decodeErr(r.name, fmt.Errorf("read %s %v column %d page %d: %w", r.name, node, c, p, err))
	}
	return a, start, s[p+1], true, nil
}

// decodeDictPage decodes the page-local rows [from, numRows) of a flat,
// all-valid dictionary mini-block page into a dictionary array.
func decodeDictPage(l *enc21pb.MiniBlockLayout, src bufSource, numRows, from uint64, dt arrow.DataType, lim limits, mem memory.Allocator) (arrow.Array, error) {
	chunks, wordSize, err := flatChunks(l, src, numRows, lim)
	if err != nil {
		return nil, err
	}
	lo := 0
	for lo < len(chunks) && chunks[lo].first+chunks[lo].count <= from {
		lo++
	}
	if lo == len(chunks) {
		return nil, fmt.Errorf("row %d is past the page's chunks", from)
	}
	dict, err := loadDictionary(l, src, lim)
	if err != nil {
		return nil, err
	}
	if dict.offsets == nil || dict.n > math.MaxInt32 {
		return nil, unsupportedErr("dictionary of %d-bit values over a string column is not supported", dict.bits)
	}
	base := chunks[lo].off
	last := chunks[len(chunks)-1]
	data, err := src.part(1, base, last.off+last.size-base)
	if err != nil {
		return nil, err
	}
	n := numRows - from
	// 32-bit indices unpack in place (whole FastLanes chunks: the slack),
	// others through the scratch buffer.
	idx := make([]byte, 4*n+4*flChunk)
	out := arrow.Int32Traits.CastFromBytes(idx)
	w := 0
	// The indices unpack into one scratch buffer, reused chunk after
	// chunk: they are converted to int32 right away.
	var scratch []byte
	if bits := bitpackedBits(l.ValueCompression); bits > 0 {
		var most uint64
		for _, ch := range chunks[lo:] {
			most = max(most, ch.count)
		}
		if most <= lim.maxItems {
			scratch = make([]byte, intoLen(most, bits))
		}
	}
	for ci := lo; ci < len(chunks); ci++ {
		ch := chunks[ci]
		into := scratch
		if bitpackedBits(l.ValueCompression) == 32 && ch.first >= from {
			into = idx[4*w:]
		}
		_, _, v, err := decodeChunk(l, l.ValueCompression, data[ch.off-base:ch.off-base+ch.size], ch.count, wordSize, lim, into)
		if err != nil {
			return nil, fmt.Errorf("chunk %d: %w", ci, err)
		}
		if v.offsets != nil || v.n != ch.count {
			return nil, fmt.Errorf("chunk %d: dictionary indices are not %d fixed-width values", ci, ch.count)
		}
		skip := uint64(0)
		if ch.first < from {
			skip = from - ch.first
		}
		if err := putIndices(out[w:], v, skip, dict.n); err != nil {
			return nil, fmt.Errorf("chunk %d: %w", ci, err)
		}
		w += int(v.n - skip)
	}
	if uint64(w) != n {
		return nil, fmt.Errorf("decoded %d dictionary indices, want %d", w, n)
	}
	values, err := dictValues(dict, dt, mem)
	if err != nil {
		return nil, err
	}
	defer values.Release()
	indices := array.NewData(arrow.PrimitiveTypes.Int32, int(n), []*memory.Buffer{nil, memory.NewBufferBytes(idx[:4*n])}, nil, 0, 0)
	defer indices.Release()
	t := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: dt}
	d := array.NewData(t, int(n), indices.Buffers(), nil, 0, 0)
	defer d.Release()
	d.SetDictionary(values.Data())
	return array.MakeFromData(d), nil
}

// putIndices writes values [skip, v.n) of index block v into dst as int32,
// checking each against the dictionary's size.
func putIndices(dst []int32, v block, skip, items uint64) error {
	get := func(i uint64) uint64 { return 0 }
	switch v.bits {
	case 8:
		get = func(i uint64) uint64 { return uint64(v.data[i]) }
	case 16:
		get = func(i uint64) uint64 { return uint64(binary.LittleEndian.Uint16(v.data[2*i:])) }
	case 32:
		if uint64(len(v.data)) < 4*v.n {
			return fmt.Errorf("dictionary indices: %d bytes for %d values", len(v.data), v.n)
		}
		src := arrow.Uint32Traits.CastFromBytes(v.data[:4*v.n])
		for i, j := range src[skip:] {
			if uint64(j) >= items {
				return fmt.Errorf("dictionary index %d is past the %d items", j, items)
			}
			dst[i] = int32(j)
		}
		return nil
	case 64:
		get = func(i uint64) uint64 { return binary.LittleEndian.Uint64(v.data[8*i:]) }
	default:
		return unsupportedErr("dictionary indices of %d bits are not supported", v.bits)
	}
	if uint64(len(v.data)) < v.n*v.bits/8 {
		return fmt.Errorf("dictionary indices: %d bytes for %d values", len(v.data), v.n)
	}
	for i := skip; i < v.n; i++ {
		j := get(i)
		if j >= items {
			return fmt.Errorf("dictionary index %d is past the %d items", j, items)
		}
		dst[i-skip] = int32(j)
	}
	return nil
}

// dictValues turns a decoded variable-width dictionary into an Arrow array
// of type dt.
func dictValues(dict block, dt arrow.DataType, mem memory.Allocator) (arrow.Array, error) {
	if err := checkOffsets(dict.offsets, dict.n, len(dict.data)); err != nil {
		return nil, fmt.Errorf("dictionary: %w", err)
	}
	first := dict.offsets[0]
	var ob []byte
	if dt.Layout().Buffers[1].ByteWidth == 8 {
		ob = make([]byte, 8*len(dict.offsets))
		for i, o := range dict.offsets {
			binary.LittleEndian.PutUint64(ob[8*i:], o-first)
		}
	} else {
		if dict.offsets[dict.n]-first > math.MaxInt32 {
			return nil, fmt.Errorf("dictionary of %d bytes overflows 32-bit offsets", dict.offsets[dict.n]-first)
		}
		ob = make([]byte, 4*len(dict.offsets))
		for i, o := range dict.offsets {
			binary.LittleEndian.PutUint32(ob[4*i:], uint32(o-first))
		}
	}
	data := dict.data[first:dict.offsets[dict.n]]
	d := array.NewData(dt, int(dict.n), []*memory.Buffer{nil, memory.NewBufferBytes(ob), memory.NewBufferBytes(data)}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}
