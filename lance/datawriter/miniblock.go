package datawriter

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// Mini-block chunk limits, as Lance's own writer keeps them: at most 4096
// values and about 8 KiB of values per chunk, so that a 2.1 chunk (whose
// size is a u16 count of 8-byte words) stays well below 32 KiB.
const (
	maxChunkValues     = 4096
	maxChunkValueBytes = 8*1024 - 6
	maxChunkBytes21    = 32 * 1024
	maxVariableChunk   = 1024 // values per chunk tried first for strings
)

// fileLayout is the data file version being written, as the writer needs it.
type fileLayout struct {
	major, minor uint16
	// largeChunk is 2.2's has_large_chunk: u32 chunk metadata words and
	// u32 value-buffer sizes.
	largeChunk bool
	// v20 selects the 2.0 plain encodings.
	v20 bool
}

// flat is a Flat compressive encoding of the given width.
func flat(bits uint64) *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Flat{Flat: &enc21pb.Flat{BitsPerValue: bits}}}
}

// miniBlockPage encodes all n rows of a narrow leaf as one mini-block page.
// The page's chunks go into dst's storage when it is large enough (the
// page's scratch says which buffer may be reused once it is written).
func miniBlockPage(l *leaf, n int, f fileLayout, dst []byte) (page, error) {
	var valueEnc *enc21pb.CompressiveEncoding
	offsetBits := 32
	switch l.kind {
	case kindFixed:
		valueEnc = flat(uint64(l.bits))
		if packable(l, f) {
			valueEnc = &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_InlineBitpacking{
				InlineBitpacking: &enc21pb.InlineBitpacking{UncompressedBitsPerValue: uint64(l.bits)},
			}}
		}
	case kindBool:
		valueEnc = flat(1)
	case kindVariable:
		switch l.vals.DataType().ID() {
		case arrow.LARGE_STRING, arrow.LARGE_BINARY:
			offsetBits = 64 // Lance keeps the Arrow offset width
		}
		valueEnc = &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Variable{
			Variable: &enc21pb.Variable{Offsets: flat(uint64(offsetBits))},
		}}
		if l.fsstTable != nil {
			valueEnc = &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Fsst{
				Fsst: &enc21pb.Fsst{SymbolTable: l.fsstTable, Values: valueEnc},
			}}
		}
	default:
		return page{}, unsupportedf("field %q: mini-block of kind %d", l.field.Name, l.kind)
	}
	l.repW, l.defW = levelWidth(l.rep, f), levelWidth(l.def, f)
	numLevels := l.slots
	if l.rep != nil {
		numLevels = len(l.rep)
	} else if l.def != nil {
		numLevels = len(l.def)
	}
	var meta []byte
	var repIndex []uint64
	// Chunks are framed straight into the page's value buffer (dst's
	// storage, reused from an earlier page when the caller has one).
	data := dst[:0]
	if want := pageEstimate(l, offsetBits); cap(data) < want {
		data = make([]byte, 0, want)
	}
	lvl := 0
	// A page whose lists are all null or empty has levels but no values:
	// it is written as one chunk with no values.
	limit := maxChunkValues
	for lo := 0; ; {
		k, valLen := nextChunk(l, lo, offsetBits, limit)
		last := lo+k == l.slots
		// Levels follow the values: a chunk takes levels until it has its
		// k visible ones; null and empty lists after them go to the next
		// chunk, and the last chunk takes all that remain.
		lhi := numLevels
		if !last {
			lhi = lvl
			for seen := 0; seen < k; lhi++ {
				if l.def == nil || l.def[lhi] <= l.maxVisible {
					seen++
				}
			}
		}
		start := len(data)
		var err error
		data, err = appendChunk(data, l, lvl, lhi, lo, k, valLen, offsetBits, f)
		if err != nil {
			return page{}, err
		}
		chunk := data[start:]
		if !f.largeChunk && len(chunk) > maxChunkBytes21 {
			data = data[:start]
			// Nested lists add up to 4 bytes of levels per value (more
			// with empty lists): retry with half the values.
			if k <= 2 && lhi-lvl > 2*max(k, 1) {
				// Mostly null or empty lists: a smaller page helps.
				return page{}, fmt.Errorf("%w: field %q: a %d-byte 2.1 mini-block chunk holding %d levels (%w)",
					ErrUnsupported, l.field.Name, len(chunk), lhi-lvl, errChunkLevels)
			}
			if k <= 2 {
				return page{}, unsupportedf("field %q: a %d-byte 2.1 mini-block chunk of %d values (values too wide)", l.field.Name, len(chunk), k)
			}
			limit = pow2Floor(k)
			if limit == k {
				limit /= 2
			}
			continue
		}
		limit = maxChunkValues
		if l.rep != nil {
			repIndex = addRepIndex(repIndex, l.rep[lvl:lhi], l.maxRep, lo == 0, last)
		}
		words := uint64(len(chunk)/8 - 1)
		logK := uint64(0)
		if !last {
			logK = uint64(bits.TrailingZeros(uint(k)))
		}
		w := words<<4 | logK
		if f.largeChunk {
			if w > 0xFFFFFFFF {
				return page{}, unsupportedf("field %q: a chunk of %d bytes", l.field.Name, len(chunk))
			}
			meta = binary.LittleEndian.AppendUint32(meta, uint32(w))
		} else {
			meta = binary.LittleEndian.AppendUint16(meta, uint16(w))
		}
		lo += k
		lvl = lhi
		if last {
			break
		}
	}
	layout := &enc21pb.MiniBlockLayout{
		ValueCompression: valueEnc,
		Layers:           l.layers,
		NumBuffers:       1,
		NumItems:         uint64(l.slots),
		HasLargeChunk:    f.largeChunk,
	}
	if l.def != nil {
		layout.DefCompression = levelEncoding(l.defW)
	}
	buffers := [][]byte{meta, data}
	if l.dict != nil {
		items := dictItems(l.dict)
		layout.Dictionary = &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Variable{
			Variable: &enc21pb.Variable{Offsets: flat(32)},
		}}
		layout.NumDictionaryItems = uint64(len(items))
		buffers = append(buffers, dictionaryBlock(items))
	} else if l.strItems != nil {
		b, enc := dictionaryBuffer(l.strItems)
		layout.Dictionary = enc
		layout.NumDictionaryItems = uint64(len(l.strItems))
		buffers = append(buffers, b)
	} else if l.fixedItems != nil {
		b, enc := fixedDictionaryBuffer(l.fixedItems, l.fixedBits)
		layout.Dictionary = enc
		layout.NumDictionaryItems = uint64(len(l.fixedItems))
		buffers = append(buffers, b)
	}
	if l.rep != nil {
		layout.RepCompression = levelEncoding(l.repW)
		layout.RepetitionIndexDepth = 1
		ri := make([]byte, 0, 8*len(repIndex))
		for _, v := range repIndex {
			ri = binary.LittleEndian.AppendUint64(ri, v)
		}
		buffers = append(buffers, ri)
	}
	return page{
		buffers: buffers,
		layout:  &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_MiniBlockLayout{MiniBlockLayout: layout}},
		rows:    uint64(n),
		scratch: data,
	}, nil
}

// pageEstimate is about the size of a mini-block page's chunks: values,
// levels and per-chunk framing, so that the buffer is sized once.
func pageEstimate(l *leaf, offsetBits int) int {
	n := l.slots
	if l.rep != nil {
		n = len(l.rep)
	} else if l.def != nil {
		n = len(l.def)
	}
	levels := 0
	if l.rep != nil {
		levels += 2 * n
	}
	if l.def != nil {
		levels += 2 * n
	}
	var vals int
	switch l.kind {
	case kindFixed:
		vals = l.slots * l.bits / 8
	case kindBool:
		vals = (l.slots + 7) / 8
	case kindVariable:
		vals = (l.slots + 1) * offsetBits / 8
		if offs, _, ok := plainOffsets(l); ok {
			vals += int(offs[l.slots] - offs[0])
		} else {
			for s := range l.slots {
				vals += variableLen(l, s)
			}
		}
	}
	// A chunk holds at least 64 values or 8 KiB; each adds up to 32
	// bytes of header and padding (variable chunks one offset more).
	chunks := l.slots/64 + 1
	if vals > 0 {
		chunks = min(chunks, vals/(maxChunkValueBytes/2)+2)
	}
	return vals + levels + chunks*(32+offsetBits/8)
}

// addRepIndex appends a chunk's repetition-index entry (depth 1): the rows
// that finish in the chunk and the levels left over after the last row
// start. A row finishes in a chunk when the next row starts in it, or when
// the chunk is the page's last. A chunk that begins with a row start
// proves the previous chunk's leftovers were a whole row.
func addRepIndex(idx []uint64, rep []uint16, maxRep uint16, first, last bool) []uint64 {
	var rows uint64
	for _, r := range rep[min(1, len(rep)):] {
		if r == maxRep {
			rows++
		}
	}
	var leftovers uint64
	if !last {
		leftovers = uint64(len(rep))
		for i := len(rep) - 1; i >= 0; i-- {
			if rep[i] == maxRep {
				leftovers = uint64(len(rep) - i)
				break
			}
		}
	}
	if !first && len(rep) > 0 && rep[0] == maxRep && idx[len(idx)-1] != 0 {
		idx[len(idx)-2]++
		idx[len(idx)-1] = 0
	}
	if last {
		rows++
	}
	return append(idx, rows, leftovers)
}

// pow2Floor returns the largest power of two <= x (x >= 1).
func pow2Floor(x int) int { return 1 << (bits.Len(uint(x)) - 1) }

// nextChunk picks the slots of the chunk starting at lo, at most limit
// (a power of two) unless they are the last, and returns their number and
// the size of their value buffer. Every chunk but the last holds a power
// of two (>= 2) of values; the last holds the rest.
func nextChunk(l *leaf, lo, offsetBits, limit int) (int, int) {
	rem := l.slots - lo
	if len(l.widths) > 0 {
		return min(packChunk, rem), packedLen(l, lo)
	}
	switch l.kind {
	case kindFixed, kindBool:
		per := maxChunkValues
		if l.kind == kindFixed {
			per = max(2, min(maxChunkValues, pow2Floor(max(1, maxChunkValueBytes*8/l.bits))))
		}
		k := min(per, limit, rem)
		if l.kind == kindBool {
			return k, (k + 7) / 8
		}
		return k, k * l.bits / 8
	}
	offs, _, plain := plainOffsets(l)
	size := func(k int) int {
		s := (k + 1) * offsetBits / 8
		if plain {
			return s + int(offs[lo+k]-offs[lo])
		}
		for r := lo; r < lo+k; r++ {
			s += variableLen(l, r)
		}
		return s
	}
	var k int
	if rem <= min(maxVariableChunk, limit) && size(rem) <= maxChunkValueBytes {
		k = rem
	} else {
		k = pow2Floor(min(rem, maxVariableChunk, limit))
		for k > 2 && size(k) > maxChunkValueBytes {
			k /= 2
		}
	}
	// The bytes are padded to the offset width.
	ow := offsetBits / 8
	return k, (size(k) + ow - 1) / ow * ow
}

// appendValues appends the value buffer of slots [lo, lo+k) (valLen
// bytes, as nextChunk sized it) to dst.
func appendValues(dst []byte, l *leaf, lo, k, valLen, offsetBits int) []byte {
	switch l.kind {
	case kindBool:
		return appendBools(dst, l, lo, lo+k)
	case kindFixed:
		if len(l.widths) > 0 {
			return appendPacked(dst, l, lo)
		}
		return appendFixed(dst, l, lo, lo+k)
	}
	return appendVariable(dst, l, lo, lo+k, offsetBits, valLen)
}

// appendVariable appends slots [lo, hi) laid out as Lance's mini-block
// Variable: offsets relative to the start of the buffer (the first is the
// offsets' own size), then the bytes, padded to the offset width (valLen
// bytes in all).
func appendVariable(dst []byte, l *leaf, lo, hi, offsetBits, valLen int) []byte {
	ow := offsetBits / 8
	k := hi - lo
	start := len(dst)
	dst = slices.Grow(dst, valLen)
	pos := uint64((k + 1) * ow)
	if offs, data, ok := plainOffsets(l); ok {
		// Every slot is a value in order: the offsets shift, the bytes
		// are one span.
		base := pos - uint64(offs[lo])
		if ow == 4 {
			for _, o := range offs[lo : hi+1] {
				dst = binary.LittleEndian.AppendUint32(dst, uint32(base+uint64(o)))
			}
		} else {
			for _, o := range offs[lo : hi+1] {
				dst = binary.LittleEndian.AppendUint64(dst, base+uint64(o))
			}
		}
		dst = append(dst, data[offs[lo]:offs[hi]]...)
	} else {
		put := func(v uint64) {
			if ow == 4 {
				dst = binary.LittleEndian.AppendUint32(dst, uint32(v))
			} else {
				dst = binary.LittleEndian.AppendUint64(dst, v)
			}
		}
		put(pos)
		for s := lo; s < hi; s++ {
			pos += uint64(variableLen(l, s))
			put(pos)
		}
		for s := lo; s < hi; s++ {
			if l.visible(s) {
				dst = append(dst, valueBytes(l, s)...)
			}
		}
	}
	for (len(dst)-start)%ow != 0 {
		dst = append(dst, 0)
	}
	return dst
}

// appendChunk frames one chunk onto dst: level count, buffer sizes, then
// the rep and def levels of [llo, lhi) and the values of slots
// [lo, lo+k) (valLen bytes), each padded to 8 bytes.
func appendChunk(dst []byte, l *leaf, llo, lhi, lo, k, valLen, offsetBits int, f fileLayout) ([]byte, error) {
	numLevels := 0
	if l.rep != nil || l.def != nil {
		numLevels = lhi - llo
	}
	// The level count and the rep and def byte sizes are all u16.
	if 2*numLevels > 0xFFFF {
		return dst, fmt.Errorf("%w: field %q: %d levels in one chunk (%w)", ErrUnsupported, l.field.Name, numLevels, errChunkLevels)
	}
	if !f.largeChunk && valLen > 0xFFFF {
		return dst, unsupportedf("field %q: %d bytes of values in one 2.1 mini-block chunk", l.field.Name, valLen)
	}
	start := len(dst)
	pad8 := func() {
		for (len(dst)-start)%8 != 0 {
			dst = append(dst, 0)
		}
	}
	dst = binary.LittleEndian.AppendUint16(dst, uint16(numLevels))
	if l.rep != nil {
		dst = binary.LittleEndian.AppendUint16(dst, uint16(levelBytes(numLevels, l.repW)))
	}
	if l.def != nil {
		dst = binary.LittleEndian.AppendUint16(dst, uint16(levelBytes(numLevels, l.defW)))
	}
	if f.largeChunk {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(valLen))
	} else {
		dst = binary.LittleEndian.AppendUint16(dst, uint16(valLen))
	}
	pad8()
	if l.rep != nil {
		dst = appendLevels(dst, l.rep[llo:lhi], l.repW)
		pad8()
	}
	if l.def != nil {
		dst = appendLevels(dst, l.def[llo:lhi], l.defW)
		pad8()
	}
	dst = appendValues(dst, l, lo, k, valLen, offsetBits)
	pad8()
	return dst, nil
}

// plainOffsets returns the absolute offsets and the data buffer of a
// string or binary leaf whose slots are its values one to one (no list
// indirection, no nulls), for the span fast paths; ok is false otherwise.
func plainOffsets(l *leaf) (offs []int32, data []byte, ok bool) {
	if l.idx != nil || l.null != nil {
		return nil, nil, false
	}
	switch v := l.vals.(type) {
	case *array.String:
		offs = v.ValueOffsets()
	case *array.Binary:
		offs = v.ValueOffsets()
	default:
		return nil, nil, false
	}
	if b := l.vals.Data().Buffers()[2]; b != nil {
		data = b.Bytes()
	}
	if len(offs) == 0 || int(offs[len(offs)-1]) > len(data) {
		return nil, nil, false
	}
	return offs, data, true
}
