package datawriter

import (
	"encoding/binary"
	"math/bits"

	"github.com/pierrec/lz4/v4"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// Dictionary encoding of fixed-width pages that bit-packing cannot shrink
// (floats, decimals), as LanceDB 0.39 writes low-cardinality ones in 2.2
// files: the distinct values once (flat, LZ4-compressed where that pays)
// and a bit-packed u32 key per value. A price or amount column of a few
// hundred distinct values takes a byte a row instead of eight.

// fixedDictionary returns the leaf l rewritten as dictionary keys over its
// distinct values, or nil when l is not a plain fixed-width leaf of a 2.2
// page that bit-packing leaves alone, or the dictionary would not save
// half of its bytes.
func fixedDictionary(l *leaf, f fileLayout) *leaf {
	if !f.largeChunk || l.kind != kindFixed || l.dict != nil || l.idx != nil || l.slots < 64 ||
		l.bits < 16 || l.bits%8 != 0 || packableType(l.vals.DataType().ID()) {
		return nil
	}
	w := l.bits / 8
	raw := l.rawValues()
	if len(raw) < l.slots*w {
		return nil
	}
	limit := min(maxDictItems, l.slots/2)
	dt := newDictTable()
	keys := make([]uint32, l.slots)
	for s := 0; s < l.slots; s++ {
		if !l.visible(s) {
			continue
		}
		k, added := dt.key(raw[s*w : (s+1)*w])
		if added && len(dt.items) > limit {
			return nil
		}
		keys[s] = k
	}
	items := dt.items
	if len(items) == 0 {
		return nil
	}
	keyBits := max(1, bits.Len(uint(len(items)-1)))
	dict := len(items)*w + (l.slots*keyBits+7)/8 + 4*(l.slots/packChunk+1)
	if 2*dict > l.slots*w {
		return nil
	}
	d := keysLeaf(l, keys)
	d.fixedItems = items
	d.fixedBits = l.bits
	return d
}

// fixedDictionaryBuffer lays out fixed-width dictionary items flat and
// returns the buffer and its encoding, wrapped in LZ4 (as LanceDB writes
// them) when LZ4 shrinks them.
func fixedDictionaryBuffer(items [][]byte, width int) ([]byte, *enc21pb.CompressiveEncoding) {
	block := make([]byte, 0, len(items)*width/8)
	for _, it := range items {
		block = append(block, it...)
	}
	enc := flat(uint64(width))
	out := make([]byte, 4+lz4.CompressBlockBound(len(block)))
	binary.LittleEndian.PutUint32(out, uint32(len(block)))
	var c lz4.Compressor
	n, err := c.CompressBlock(block, out[4:])
	if err != nil || n == 0 || 4+n >= len(block) {
		return block, enc
	}
	return out[:4+n], &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_General{General: &enc21pb.General{
		Compression: &enc21pb.BufferCompression{Scheme: enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_LZ4},
		Values:      enc,
	}}}
}
