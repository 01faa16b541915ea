package datawriter

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/mvd-project/mvd/lance/internal/format"
	"github.com/mvd-project/mvd/lance/internal/pb/enc20pb"
	"github.com/mvd-project/mvd/lance/internal/pb/filepb"
)

// File format 2.0 (footer 0.3) uses the plain encodings LanceDB 0.39 itself
// writes for it (lance-format.md §3.2): one column per field, parents
// included, one page per column, no compression.

func enc20Flat(bits uint64, buf uint32) *enc20pb.ArrayEncoding {
	return &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Flat{Flat: &enc20pb.Flat{
		BitsPerValue: bits, Buffer: &enc20pb.Buffer{BufferIndex: buf},
	}}}
}

func enc20NoNulls(values *enc20pb.ArrayEncoding) *enc20pb.ArrayEncoding {
	return &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Nullable{Nullable: &enc20pb.Nullable{
		Nullability: &enc20pb.Nullable_NoNulls{NoNulls: &enc20pb.Nullable_NoNull{Values: values}},
	}}}
}

func enc20SomeNulls(validity, values *enc20pb.ArrayEncoding) *enc20pb.ArrayEncoding {
	return &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Nullable{Nullable: &enc20pb.Nullable{
		Nullability: &enc20pb.Nullable_SomeNulls{SomeNulls: &enc20pb.Nullable_SomeNull{Validity: validity, Values: values}},
	}}}
}

// validityBits is an Arrow-style (LSB-first) validity bitmap of a.
func validityBits(a arrow.Array) []byte {
	out := make([]byte, (a.Len()+7)/8)
	for i := 0; i < a.Len(); i++ {
		if a.IsValid(i) {
			out[i/8] |= 1 << (i % 8)
		}
	}
	return out
}

// writeField20 writes the columns of one top-level field (and its
// descendants, depth first) and returns their field ids.
func writeField20(c *container, field *format.Field, arr arrow.Array) ([]int32, error) {
	var ids []int32
	var walk func(f *format.Field, a arrow.Array) error
	walk = func(f *format.Field, a arrow.Array) error {
		if !f.Nullable && a.NullN() > 0 {
			return mismatchf("field %q is not nullable but has %d nulls", f.Name, a.NullN())
		}
		p, err := page20(f, a)
		if err != nil {
			return err
		}
		p.rows = uint64(a.Len())
		var pages []*filepb.ColumnMetadata_Page
		if a.Len() > 0 {
			mp, err := c.addPage(p)
			if err != nil {
				return err
			}
			pages = append(pages, mp)
		}
		if err := c.addColumn(pages); err != nil {
			return err
		}
		ids = append(ids, f.ID)
		switch v := a.(type) {
		case *array.Struct:
			for i, ch := range f.Children {
				if err := walk(ch, v.Field(i)); err != nil {
					return err
				}
			}
		case array.ListLike:
			if _, fsl := v.(*array.FixedSizeList); fsl {
				return nil
			}
			start, end := listSpan(v)
			items := array.NewSlice(v.ListValues(), start, end)
			defer items.Release()
			return walk(f.Children[0], items)
		}
		return nil
	}
	if err := walk(field, arr); err != nil {
		return nil, err
	}
	return ids, nil
}

// listSpan returns the range of item indices a list array refers to.
func listSpan(l array.ListLike) (int64, int64) {
	if l.Len() == 0 {
		return 0, 0
	}
	s, _ := l.ValueOffsets(0)
	_, e := l.ValueOffsets(l.Len() - 1)
	return s, e
}

// page20 encodes one 2.0 column of a.
func page20(f *format.Field, a arrow.Array) (page, error) {
	n := a.Len()
	switch t := a.DataType().(type) {
	case *arrow.DictionaryType:
		return dictionaryPage20(f, a.(*array.Dictionary))
	case *arrow.NullType:
		// As LanceDB writes it: no buffers at all.
		return page{layout: &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Nullable{Nullable: &enc20pb.Nullable{
			Nullability: &enc20pb.Nullable_AllNulls{AllNulls: &enc20pb.Nullable_AllNull{}},
		}}}}, nil
	case *arrow.StructType:
		if a.NullN() > 0 {
			return page{}, unsupportedf("field %q: 2.0 files cannot store null structs", f.Name)
		}
		return page{layout: &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Struct{Struct: &enc20pb.SimpleStruct{}}}}, nil
	case *arrow.ListType, *arrow.LargeListType:
		// End offsets into the items column; a null list stores its end
		// plus the adjustment (items + 1), an empty one repeats the end.
		l := a.(array.ListLike)
		start, end := listSpan(l)
		adj := uint64(end-start) + 1
		buf := make([]byte, 0, 8*n)
		for r := 0; r < n; r++ {
			_, e := l.ValueOffsets(r)
			v := uint64(e - start)
			if l.IsNull(r) {
				v += adj
			}
			buf = binary.LittleEndian.AppendUint64(buf, v)
		}
		return page{buffers: [][]byte{buf}, layout: &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_List{List: &enc20pb.List{
			Offsets: enc20NoNulls(enc20Flat(64, 0)), NullOffsetAdjustment: adj, NumItems: uint64(end - start),
		}}}}, nil
	case *arrow.FixedSizeListType:
		it, ok := t.Elem().(arrow.FixedWidthDataType)
		if !ok || t.Elem().ID() == arrow.BOOL || it.BitWidth()%8 != 0 {
			return page{}, unsupportedf("field %q: fixed_size_list of %s", f.Name, t.Elem())
		}
		fsl := a.(*array.FixedSizeList)
		dim := int(t.Len())
		items := array.NewSlice(fsl.ListValues(), int64(fsl.Data().Offset()*dim), int64((fsl.Data().Offset()+n)*dim))
		defer items.Release()
		vals := rawFixed(items, it.BitWidth()/8)
		var itemsEnc *enc20pb.ArrayEncoding
		var bufs [][]byte
		next := uint32(0)
		if a.NullN() > 0 {
			bufs, next = append(bufs, validityBits(a)), 1
		}
		if items.NullN() > 0 {
			bufs = append(bufs, validityBits(items), vals)
			itemsEnc = enc20SomeNulls(enc20Flat(1, next), enc20Flat(uint64(it.BitWidth()), next+1))
		} else {
			bufs = append(bufs, vals)
			itemsEnc = enc20NoNulls(enc20Flat(uint64(it.BitWidth()), next))
		}
		inner := &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_FixedSizeList{FixedSizeList: &enc20pb.FixedSizeList{
			Dimension: uint32(dim), Items: itemsEnc, HasValidity: items.NullN() > 0,
		}}}
		if a.NullN() > 0 {
			return page{buffers: bufs, layout: enc20SomeNulls(enc20Flat(1, 0), inner)}, nil
		}
		return page{buffers: bufs, layout: enc20NoNulls(inner)}, nil
	case *arrow.StringType, *arrow.LargeStringType, *arrow.BinaryType, *arrow.LargeBinaryType:
		// End offsets; a null row stores its end plus the adjustment
		// (total bytes + 1).
		var data []byte
		ends := make([]uint64, n)
		for r := 0; r < n; r++ {
			if a.IsValid(r) {
				data = append(data, rowBytes(a, r)...)
			}
			ends[r] = uint64(len(data))
		}
		adj := uint64(len(data)) + 1
		idx := make([]byte, 0, 8*n)
		for r, e := range ends {
			if a.IsNull(r) {
				e += adj
			}
			idx = binary.LittleEndian.AppendUint64(idx, e)
		}
		return page{buffers: [][]byte{idx, data}, layout: &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Binary{Binary: &enc20pb.Binary{
			Indices: enc20NoNulls(enc20Flat(64, 0)), Bytes: enc20Flat(8, 1), NullAdjustment: adj,
		}}}}, nil
	case *arrow.BooleanType:
		b := a.(*array.Boolean)
		vals := make([]byte, (n+7)/8)
		for r := 0; r < n; r++ {
			if b.IsValid(r) && b.Value(r) {
				vals[r/8] |= 1 << (r % 8)
			}
		}
		return nullable20(a, vals, 1), nil
	case arrow.FixedWidthDataType:
		if t.BitWidth()%8 != 0 {
			return page{}, unsupportedf("field %q: %d-bit values", f.Name, t.BitWidth())
		}
		return nullable20(a, rawFixed(a, t.BitWidth()/8), uint64(t.BitWidth())), nil
	}
	return page{}, unsupportedf("field %q: type %s in a 2.0 file", f.Name, a.DataType())
}

// nullable20 wraps flat values in the 2.0 nullable encoding.
func nullable20(a arrow.Array, vals []byte, bits uint64) page {
	if a.NullN() == 0 {
		return page{buffers: [][]byte{vals}, layout: enc20NoNulls(enc20Flat(bits, 0))}
	}
	return page{buffers: [][]byte{validityBits(a), vals}, layout: enc20SomeNulls(enc20Flat(1, 0), enc20Flat(bits, 1))}
}

// rawFixed returns the value bytes of a fixed-width array (null slots
// zeroed).
func rawFixed(a arrow.Array, width int) []byte {
	n := a.Len()
	out := make([]byte, n*width)
	bufs := a.Data().Buffers()
	if len(bufs) < 2 || bufs[1] == nil {
		return out
	}
	off := a.Data().Offset()
	copy(out, bufs[1].Bytes()[off*width:(off+n)*width])
	for r := 0; r < n; r++ {
		if a.IsNull(r) {
			clear(out[r*width : (r+1)*width])
		}
	}
	return out
}

// rowBytes returns the bytes of row r of a string or binary array.
func rowBytes(a arrow.Array, r int) []byte {
	switch v := a.(type) {
	case *array.String:
		o := v.ValueOffsets() // the buffer's bytes, not a copy: callers only read
		return v.ValueBytes()[o[r]-o[0] : o[r+1]-o[0]]
	case *array.LargeString:
		o := v.ValueOffsets()
		return v.ValueBytes()[o[r]-o[0] : o[r+1]-o[0]]
	case *array.Binary:
		return v.Value(r)
	case *array.LargeBinary:
		return v.Value(r)
	}
	return nil
}
