package datawriter

import (
	"encoding/binary"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
)

// Inline bit-packing, as LanceDB 0.39 writes integer mini-block pages in
// 2.2 files: every chunk holds 1024 values (the last chunk the rest,
// packed as 1024 with zeros) as one word of the value width holding the
// bit width w, then the values' low w bits in the FastLanes layout
// (lance-format.md; mvd's reader: lance/datafile/bitpack.go). Views keep
// ids and row ids, which need 20-25 of their 64 bits: the data file a
// refresh writes and fsyncs shrinks by that much.

// packChunk is the values of one bit-packed chunk.
const packChunk = 1024

// flOrder is the FastLanes row permutation: row r of a lane holds value
// flOrder[r/8]*16 + (r%8)*128 + lane.
var flOrder = [8]int{0, 4, 2, 6, 1, 5, 3, 7}

// packableType reports whether values of type id are integers (or stored
// as integers: dates, times, timestamps, durations), which LanceDB 0.39
// bit-packs alike (its choice looks at the bytes, not the logical type).
func packableType(id arrow.Type) bool {
	switch id {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64,
		arrow.TIMESTAMP, arrow.DURATION:
		return true
	}
	return false
}

// packable reports whether a mini-block leaf is written bit-packed:
// integer-like values of 8 to 64 bits (no dictionary keys, no list
// indirection) in 2.2 files. It records each chunk's bit width in
// l.widths; a page that bit-packing would not shrink is left flat
// (LanceDB's rule: packed when its estimate is below the raw size).
func packable(l *leaf, f fileLayout) bool {
	l.widths = l.widths[:0]
	if !f.largeChunk || l.kind != kindFixed || l.dict != nil || l.idx != nil || l.slots == 0 {
		return false
	}
	if !packableType(l.vals.DataType().ID()) {
		return false
	}
	t := l.bits
	packed, flat := 0, l.slots*t/8
	raw := l.rawValues()
	for lo := 0; lo < l.slots; lo += packChunk {
		hi := min(l.slots, lo+packChunk)
		var or uint64
		switch t {
		case 64:
			for s := lo; s < hi; s++ {
				or |= l.masked(s, binary.LittleEndian.Uint64(raw[8*s:]))
			}
		case 32:
			for s := lo; s < hi; s++ {
				or |= l.masked(s, uint64(binary.LittleEndian.Uint32(raw[4*s:])))
			}
		case 16:
			for s := lo; s < hi; s++ {
				or |= l.masked(s, uint64(binary.LittleEndian.Uint16(raw[2*s:])))
			}
		case 8:
			for s := lo; s < hi; s++ {
				or |= l.masked(s, uint64(raw[s]))
			}
		default:
			return false
		}
		w := bits.Len64(or)
		l.widths = append(l.widths, uint8(w))
		packed += t/8 + packChunk*w/8
	}
	if packed >= flat {
		l.widths = l.widths[:0]
		return false
	}
	return true
}

// rawValues returns the bytes of the leaf's values from its first slot.
func (l *leaf) rawValues() []byte {
	d := l.vals.Data()
	b := d.Buffers()
	if len(b) < 2 || b[1] == nil {
		return make([]byte, l.slots*l.bits/8)
	}
	return b[1].Bytes()[d.Offset()*l.bits/8:]
}

// masked is v, or 0 for a null slot (Arrow leaves their bytes unspecified).
func (l *leaf) masked(s int, v uint64) uint64 {
	if l.null != nil && l.null[s] {
		return 0
	}
	return v
}

// packedLen is the value buffer size of the bit-packed chunk starting at
// slot lo.
func packedLen(l *leaf, lo int) int {
	w := int(l.widths[lo/packChunk])
	return l.bits/8 + packChunk*w/8
}

// appendPacked appends the bit-packed chunk of slots [lo, min(lo+1024,
// slots)) to dst: its width word and its packed words.
func appendPacked(dst []byte, l *leaf, lo int) []byte {
	t := l.bits
	w := int(l.widths[lo/packChunk])
	hi := min(l.slots, lo+packChunk)
	raw := l.rawValues()
	var in [packChunk]uint64
	for s := lo; s < hi; s++ {
		var v uint64
		switch t {
		case 64:
			v = binary.LittleEndian.Uint64(raw[8*s:])
		case 32:
			v = uint64(binary.LittleEndian.Uint32(raw[4*s:]))
		case 16:
			v = uint64(binary.LittleEndian.Uint16(raw[2*s:]))
		default:
			v = uint64(raw[s])
		}
		in[s-lo] = l.masked(s, v)
	}
	dst = appendWord(dst, uint64(w), t)
	return appendFastLanes(dst, &in, w, t)
}

// appendFastLanes appends the 1024 values of in (t bits each, of which the
// low w are kept) packed in the FastLanes layout: 1024*w/t words of t bits,
// one lane per column, lane l's row r holding value flOrder[r/8]*16 +
// (r%8)*128 + l at bit r*w of the lane.
func appendFastLanes(dst []byte, in *[packChunk]uint64, w, t int) []byte {
	if w == 0 {
		return dst
	}
	lanes := packChunk / t
	words := packChunk * w / t
	var out [packChunk]uint64 // words (t bits each, held in uint64s)
	mask := uint64(1)<<t - 1
	if t == 64 {
		mask = ^uint64(0)
	}
	for ln := 0; ln < lanes; ln++ {
		for r := 0; r < t; r++ {
			v := in[flOrder[r/8]*16+(r%8)*128+ln]
			p := r * w
			k, sh := p/t, p%t
			out[lanes*k+ln] |= (v << sh) & mask
			if sh+w > t {
				out[lanes*(k+1)+ln] |= v >> (t - sh)
			}
		}
	}
	for _, x := range out[:words] {
		dst = appendWord(dst, x, t)
	}
	return dst
}

// appendWord appends x as a little-endian word of t bits (8, 16, 32, 64).
func appendWord(dst []byte, x uint64, t int) []byte {
	switch t {
	case 64:
		return binary.LittleEndian.AppendUint64(dst, x)
	case 32:
		return binary.LittleEndian.AppendUint32(dst, uint32(x))
	case 16:
		return binary.LittleEndian.AppendUint16(dst, uint16(x))
	default:
		return append(dst, byte(x))
	}
}
