package datawriter

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/mvd-project/mvd/lance/internal/format"
	"github.com/mvd-project/mvd/lance/internal/pb/enc20pb"
)

// Dictionary-typed fields (logical type "dict:…") are written natively,
// as LanceDB 0.39 writes them: the keys as the column's values and the
// items alongside (a mini-block page's dictionary buffer in 2.1+, the
// 2.0 dictionary encoding). LanceDB hands such a column back as a
// dictionary only if the file holds one.

// checkDictionary accepts the dictionaries mvd's reader and LanceDB both
// handle: integer keys over string or binary items.
func checkDictionary(f *format.Field, t *arrow.DictionaryType) error {
	switch t.ValueType.ID() {
	case arrow.STRING, arrow.BINARY:
	default:
		return unsupportedf("field %q: dictionary of %s items", f.Name, t.ValueType)
	}
	if !arrow.IsInteger(t.IndexType.ID()) {
		return unsupportedf("field %q: dictionary keys of type %s", f.Name, t.IndexType)
	}
	return nil
}

// dictNull reports whether row i of a is null, counting a key that points
// at a null item as null (Lance keeps nulls in the keys' validity).
func dictNull(a arrow.Array, i int) bool {
	if a.IsNull(i) {
		return true
	}
	d, ok := a.(*array.Dictionary)
	return ok && d.Dictionary().IsNull(d.GetValueIndex(i))
}

// dictItems returns the bytes of every item of a dictionary (a null item
// is empty).
func dictItems(d *array.Dictionary) [][]byte {
	items := d.Dictionary()
	out := make([][]byte, items.Len())
	for i := range out {
		if items.IsValid(i) {
			out[i] = rowBytes(items, i)
		}
	}
	return out
}

// dictionaryBlock lays out items as Lance's block Variable encoding: u32
// bits per offset (32), u32 start of the bytes, n+1 u32 offsets counted
// from that start, then the bytes.
func dictionaryBlock(items [][]byte) []byte {
	start := 8 + 4*(len(items)+1)
	out := binary.LittleEndian.AppendUint32(nil, 32)
	out = binary.LittleEndian.AppendUint32(out, uint32(start))
	pos := uint32(0)
	out = binary.LittleEndian.AppendUint32(out, pos)
	for _, it := range items {
		pos += uint32(len(it))
		out = binary.LittleEndian.AppendUint32(out, pos)
	}
	for _, it := range items {
		out = append(out, it...)
	}
	return out
}

// dictionaryPage20 encodes a dictionary column in 2.0 as LanceDB does:
// keys flat, items as a binary array that ends with one null item when
// some row is null; null rows point at it. 2.0 keys cannot be null, so a
// dictionary whose keys use their type's whole range cannot hold nulls.
func dictionaryPage20(f *format.Field, a *array.Dictionary) (page, error) {
	t := a.DataType().(*arrow.DictionaryType)
	if err := checkDictionary(f, t); err != nil {
		return page{}, err
	}
	// Only the items the rows use are kept (a page is often a slice of a
	// larger dictionary), in order of first use, then the null item.
	all := dictItems(a)
	n := a.Len()
	remap := make(map[int]uint64)
	var items [][]byte
	var itemValid []bool
	keyOf := make([]uint64, n)
	hasNull := false
	for r := 0; r < n; r++ {
		if dictNull(a, r) {
			hasNull = true
			continue
		}
		j := a.GetValueIndex(r)
		k, ok := remap[j]
		if !ok {
			k = uint64(len(items))
			remap[j] = k
			items = append(items, all[j])
			itemValid = append(itemValid, true)
		}
		keyOf[r] = k
	}
	nullKey := uint64(len(items))
	if hasNull {
		items = append(items, nil)
		itemValid = append(itemValid, false)
	}
	bits := t.IndexType.(arrow.FixedWidthDataType).BitWidth()
	maxKey := uint64(1)<<(bits-1) - 1
	if arrow.IsUnsignedInteger(t.IndexType.ID()) {
		maxKey = maxKey<<1 | 1
	}
	if uint64(len(items)) > maxKey+1 {
		return page{}, unsupportedf("field %q: %d dictionary items (with the null one) overflow %s keys", f.Name, len(items), t.IndexType)
	}
	width := bits / 8
	keys := make([]byte, 0, n*width)
	for r := 0; r < n; r++ {
		k := keyOf[r]
		if dictNull(a, r) {
			k = nullKey
		}
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], k)
		keys = append(keys, w[:width]...)
	}
	// Items: end offsets, a null item's end plus the adjustment.
	var data []byte
	ends := make([]uint64, len(items))
	for i, it := range items {
		data = append(data, it...)
		ends[i] = uint64(len(data))
	}
	adj := uint64(len(data)) + 1
	idx := make([]byte, 0, 8*len(items))
	for i, e := range ends {
		if !itemValid[i] {
			e += adj
		}
		idx = binary.LittleEndian.AppendUint64(idx, e)
	}
	itemsEnc := &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Binary{Binary: &enc20pb.Binary{
		Indices: enc20NoNulls(enc20Flat(64, 1)), Bytes: enc20Flat(8, 2), NullAdjustment: adj,
	}}}
	return page{buffers: [][]byte{keys, idx, data}, layout: &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Dictionary{Dictionary: &enc20pb.Dictionary{
		Indices: enc20NoNulls(enc20Flat(uint64(bits), 0)), Items: itemsEnc, NumDictionaryItems: uint32(len(items)),
	}}}}, nil
}
