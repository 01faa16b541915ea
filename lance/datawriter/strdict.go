package datawriter

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/pierrec/lz4/v4"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// Dictionary encoding of string and binary pages, as LanceDB 0.39 writes
// low-cardinality strings in 2.2 files: the page's distinct values once
// (the mini-block dictionary buffer, LZ4-compressed when large) and a u32
// key per value, bit-packed. A view's categories, kinds and tags take a
// few bits a row instead of their bytes and offsets.

const (
	// maxDictItems bounds a page's dictionary: the whole dictionary is
	// read for any row of the page.
	maxDictItems = 1 << 16
	// dictLZ4Bytes is the dictionary size from which it is LZ4-compressed
	// (LanceDB compresses blocks from 32 KiB).
	dictLZ4Bytes = 32 << 10
)

// stringDictionary returns the leaf l rewritten as dictionary keys over
// its distinct values, or nil when l is not a plain string or binary leaf
// of a 2.2 page or the dictionary would not save half of its bytes.
func stringDictionary(l *leaf, f fileLayout) *leaf {
	if !f.largeChunk || l.kind != kindVariable || l.dict != nil || l.slots < 64 {
		return nil
	}
	switch l.vals.DataType().ID() {
	case arrow.STRING, arrow.BINARY:
	default:
		return nil
	}
	// One pass: each value's key from an open-addressing table of the
	// distinct values' hashes (no allocation per value), giving up once
	// they are too many to halve the page, as most pages of names, ids
	// and text do.
	limit := min(maxDictItems, l.slots/2)
	dt := newDictTable()
	keys := make([]uint32, l.slots)
	plain, itemBytes := 4*l.slots, 0
	for s := 0; s < l.slots; s++ {
		if !l.visible(s) {
			continue
		}
		v := valueBytes(l, s)
		plain += len(v)
		k, added := dt.key(v)
		if added {
			if len(dt.items) > limit {
				return nil
			}
			itemBytes += len(v)
		}
		keys[s] = k
	}
	items := dt.items
	if len(items) == 0 {
		return nil
	}
	keyBits := max(1, bits.Len(uint(len(items)-1)))
	dict := itemBytes + 4*(len(items)+1) + (l.slots*keyBits+7)/8 + 4*(l.slots/packChunk+1)
	if 2*dict > plain {
		return nil
	}
	d := keysLeaf(l, keys)
	d.idx = nil
	d.strItems = items
	return d
}

// keysLeaf is l with its values replaced by dictionary keys, one 32-bit
// key a slot: what both dictionary encodings write as the page's values.
func keysLeaf(l *leaf, keys []uint32) *leaf {
	buf := memory.NewBufferBytes(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(keys))), 4*len(keys)))
	if !littleEndian {
		b := make([]byte, 4*len(keys))
		for i, k := range keys {
			binary.LittleEndian.PutUint32(b[4*i:], k)
		}
		buf = memory.NewBufferBytes(b)
	}
	data := array.NewData(arrow.PrimitiveTypes.Uint32, l.slots, []*memory.Buffer{nil, buf}, nil, 0, 0)
	d := *l
	d.kind, d.bits = kindFixed, 32
	d.vals = array.NewUint32Data(data)
	data.Release()
	return &d
}

// littleEndian reports whether this machine stores words little-endian,
// as Lance files do (keys are then written from memory as they are).
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// dictionaryBuffer lays out a mini-block page's dictionary items and
// returns the buffer and its encoding: Variable (u32 offsets), wrapped in
// LZ4 when the items are large and LZ4 shrinks them.
func dictionaryBuffer(items [][]byte) ([]byte, *enc21pb.CompressiveEncoding) {
	block := dictionaryBlock(items)
	enc := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Variable{
		Variable: &enc21pb.Variable{Offsets: flat(32)},
	}}
	if len(block) < dictLZ4Bytes {
		return block, enc
	}
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

// dictTable maps values to their keys (first-seen order) by an
// open-addressing table of key+1 (0: empty) over the values' hashes. The
// items are the values' own bytes, not copies: a table lives only while
// its page is encoded.
type dictTable struct {
	seed   maphash.Seed
	slots  []uint32
	hashes []uint64 // per item
	items  [][]byte
}

func newDictTable() *dictTable {
	return &dictTable{seed: maphash.MakeSeed(), slots: make([]uint32, 256)}
}

// key returns v's key, adding v as a new item (added) if it has none.
func (d *dictTable) key(v []byte) (k uint32, added bool) {
	h := maphash.Bytes(d.seed, v)
	mask := uint64(len(d.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		e := d.slots[i]
		if e == 0 {
			k = uint32(len(d.items))
			d.slots[i] = k + 1
			d.items = append(d.items, v)
			d.hashes = append(d.hashes, h)
			if 2*len(d.items) > len(d.slots) {
				d.grow()
			}
			return k, true
		}
		if d.hashes[e-1] == h && bytes.Equal(d.items[e-1], v) {
			return e - 1, false
		}
	}
}

// grow doubles the table and places every item again.
func (d *dictTable) grow() {
	d.slots = make([]uint32, 2*len(d.slots))
	mask := uint64(len(d.slots) - 1)
	for k, h := range d.hashes {
		i := h & mask
		for d.slots[i] != 0 {
			i = (i + 1) & mask
		}
		d.slots[i] = uint32(k) + 1
	}
}
