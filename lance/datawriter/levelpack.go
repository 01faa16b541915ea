package datawriter

import (
	"encoding/binary"
	"math/bits"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// Out-of-line bit-packing of repetition and definition levels, as LanceDB
// 0.39 writes them in 2.2 mini-block chunks: the page names one bit width
// w (enough for its highest level) and each chunk's levels are FastLanes
// blocks of 1024 16-bit values packed to w bits, 128·w bytes each. A
// chunk's last, partial block is packed (padded with zeros) when that is
// smaller than its raw u16s, else stored raw; the reader tells the two
// apart by the buffer's size. A nullable column's levels need 1 or 2 bits
// instead of 16: two bytes a row less.

// levelWidth is the bit width the levels of a page are packed to, or 0
// to write them flat (2.1 files, or levels as wide as 16 bits).
func levelWidth(levels []uint16, f fileLayout) int {
	if levels == nil || !f.largeChunk {
		return 0
	}
	var m uint16
	for _, v := range levels {
		m |= v
	}
	w := max(1, bits.Len16(m))
	if w >= 16 {
		return 0
	}
	return w
}

// levelEncoding is the compression that describes levels written at width w.
func levelEncoding(w int) *enc21pb.CompressiveEncoding {
	if w == 0 {
		return flat(16)
	}
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_OutOfLineBitpacking{
		OutOfLineBitpacking: &enc21pb.OutOfLineBitpacking{UncompressedBitsPerValue: 16, Values: flat(uint64(w))},
	}}
}

// packTail reports whether a partial block of n < 1024 levels is packed
// (the padding costs fewer bits than packing saves) rather than raw.
func packTail(n, w int) bool { return w*(packChunk-n) < (16-w)*n }

// levelBytes is the size of n levels written at width w.
func levelBytes(n, w int) int {
	if w == 0 {
		return 2 * n
	}
	size := n / packChunk * 128 * w
	if tail := n % packChunk; tail > 0 {
		if packTail(tail, w) {
			size += 128 * w
		} else {
			size += 2 * tail
		}
	}
	return size
}

// appendLevels appends levels written at width w (levelBytes bytes).
func appendLevels(dst []byte, levels []uint16, w int) []byte {
	if w == 0 {
		for _, v := range levels {
			dst = binary.LittleEndian.AppendUint16(dst, v)
		}
		return dst
	}
	var in [packChunk]uint64
	for lo := 0; lo < len(levels); lo += packChunk {
		part := levels[lo:min(len(levels), lo+packChunk)]
		if len(part) < packChunk && !packTail(len(part), w) {
			for _, v := range part {
				dst = binary.LittleEndian.AppendUint16(dst, v)
			}
			break
		}
		clear(in[:])
		for i, v := range part {
			in[i] = uint64(v)
		}
		dst = appendFastLanes(dst, &in, w, 16)
	}
	return dst
}
