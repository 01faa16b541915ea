package datafile

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// bitmap packs valid flags into an Arrow validity buffer (nil when all valid).
func bitmap(valid []bool, nulls int, mem memory.Allocator) *memory.Buffer {
	if nulls == 0 {
		return nil
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize((len(valid) + 7) / 8)
	b := buf.Bytes()
	clear(b)
	for i, v := range valid {
		if v {
			b[i/8] |= 1 << (i % 8)
		}
	}
	return buf
}

// bufFrom wraps bytes the decoder produced (or read) and never touches
// again, without copying: value buffers are the bulk of a batch and a copy
// into mem would double the work. Validity bitmaps come from mem.
func bufFrom(b []byte, _ memory.Allocator) *memory.Buffer {
	return memory.NewBufferBytes(b)
}

// buildNode assembles the Arrow data of path depth d for field node n from
// the unravelled leaves under it (keyed by column).
func buildNode(n *fieldNode, dt arrow.DataType, d int, leaves map[int]*leafData, mem memory.Allocator) (arrow.ArrayData, error) {
	first := n.leaves()[0]
	ld := leaves[first.column]
	if ld == nil || d >= len(ld.states) {
		return nil, fmt.Errorf("%v: no decoded column", n)
	}
	st := &ld.states[d]
	length := len(st.valid)
	switch t := dt.(type) {
	case *arrow.StructType:
		if !isStructType(n.f.LogicalType) || len(t.Fields()) != len(n.children) {
			return nil, fmt.Errorf("%v is %q in the file but %v was asked for", n, n.f.LogicalType, dt)
		}
		children := make([]arrow.ArrayData, len(n.children))
		defer func() {
			for _, c := range children {
				if c != nil {
					c.Release()
				}
			}
		}()
		for i, c := range n.children {
			cd, err := buildNode(c, t.Field(i).Type, d+1, leaves, mem)
			if err != nil {
				return nil, err
			}
			if cd.Len() != length {
				cd.Release()
				return nil, fmt.Errorf("%v has %d rows, its parent %d", c, cd.Len(), length)
			}
			children[i] = cd
		}
		return newData(dt, length, []*memory.Buffer{bitmap(st.valid, st.nulls, mem)}, children, st.nulls, 0), nil
	case *arrow.ListType, *arrow.LargeListType:
		if !isListType(n.f.LogicalType) {
			return nil, fmt.Errorf("%v is %q in the file but %v was asked for", n, n.f.LogicalType, dt)
		}
		child, err := buildNode(n.children[0], dt.(arrow.ListLikeType).Elem(), d+1, leaves, mem)
		if err != nil {
			return nil, err
		}
		defer child.Release()
		end := int64(child.Len())
		var offs []byte
		if _, large := dt.(*arrow.LargeListType); large {
			offs = make([]byte, 8*(length+1))
			for i, s := range st.starts {
				binary.LittleEndian.PutUint64(offs[8*i:], uint64(s))
			}
			binary.LittleEndian.PutUint64(offs[8*length:], uint64(end))
		} else {
			if end > math.MaxInt32 {
				return nil, fmt.Errorf("%v: %d list items overflow 32-bit offsets", n, end)
			}
			offs = make([]byte, 4*(length+1))
			for i, s := range st.starts {
				binary.LittleEndian.PutUint32(offs[4*i:], uint32(s))
			}
			binary.LittleEndian.PutUint32(offs[4*length:], uint32(end))
		}
		return newData(dt, length, []*memory.Buffer{bitmap(st.valid, st.nulls, mem), bufFrom(offs, mem)}, []arrow.ArrayData{child}, st.nulls, 0), nil
	}
	if len(n.children) != 0 {
		return nil, fmt.Errorf("%v is %q in the file but %v was asked for", n, n.f.LogicalType, dt)
	}
	if d != len(ld.states)-1 {
		return nil, fmt.Errorf("%v: leaf at depth %d of %d", n, d, len(ld.states))
	}
	return buildLeaf(n, dt, ld, st, mem)
}

// joinFixed concatenates fixed-width blocks of bits per value, using zero
// filler for value-less (all-null) blocks.
func joinFixed(bs []block, bits uint64) ([]byte, error) {
	if len(bs) == 1 && bs[0].offsets == nil && bs[0].bits == bits && bs[0].data != nil && !(bits == 1 && bs[0].isConst) {
		// One page: use its bytes as they are.
		if need := (bs[0].n*bits + 7) / 8; uint64(len(bs[0].data)) >= need {
			return bs[0].data[:need], nil
		}
		return nil, fmt.Errorf("page holds %d bytes for %d values of %d bits", len(bs[0].data), bs[0].n, bits)
	}
	var total uint64
	for _, b := range bs {
		total += b.n
	}
	out := make([]byte, (total*bits+7)/8)
	var pos uint64
	for i, b := range bs {
		if b.data == nil && b.offsets == nil {
			pos += b.n
			continue
		}
		if bits == 1 && b.isConst && b.bits == 8 {
			// A constant bool is stored as one byte.
			for k := uint64(0); k < b.n; k++ {
				if b.data[k] != 0 {
					out[(pos+k)/8] |= 1 << ((pos + k) % 8)
				}
			}
			pos += b.n
			continue
		}
		if b.offsets != nil || b.bits != bits {
			return nil, fmt.Errorf("page %d holds %d-bit values, want %d", i, b.bits, bits)
		}
		if bits%8 == 0 {
			copy(out[pos*bits/8:], b.data[:b.n*bits/8])
		} else {
			for k := uint64(0); k < b.n*bits; k++ {
				if b.data[k/8]>>(k%8)&1 == 1 {
					q := pos*bits + k
					out[q/8] |= 1 << (q % 8)
				}
			}
		}
		pos += b.n
	}
	return out, nil
}

// joinVar concatenates variable-width blocks (value-less blocks give empty
// values).
func joinVar(bs []block) ([]uint64, []byte, error) {
	var total uint64
	for _, b := range bs {
		total += b.n
	}
	offs := make([]uint64, 1, total+1)
	var data []byte
	for i, b := range bs {
		if b.data == nil && b.offsets == nil {
			for k := uint64(0); k < b.n; k++ {
				offs = append(offs, uint64(len(data)))
			}
			continue
		}
		if b.offsets == nil {
			return nil, nil, fmt.Errorf("page %d holds fixed-width values, want variable", i)
		}
		base := uint64(len(data))
		data = append(data, b.data...)
		for _, o := range b.offsets[1:] {
			offs = append(offs, base+o)
		}
	}
	return offs, data, nil
}

func buildLeaf(n *fieldNode, dt arrow.DataType, ld *leafData, st *nodeState, mem memory.Allocator) (_ arrow.ArrayData, err error) {
	length := len(st.valid)
	if uint64(length) != ld.nvals {
		return nil, fmt.Errorf("%v: %d slots but %d values", n, length, ld.nvals)
	}
	if t, ok := dt.(*arrow.DictionaryType); ok {
		values, err := buildLeaf(n, t.ValueType, ld, st, mem)
		if err != nil {
			return nil, err
		}
		defer values.Release()
		return dictionaryEncode(t, array.MakeFromData(values), mem)
	}
	valid := bitmap(st.valid, st.nulls, mem)
	defer func() {
		if err != nil && valid != nil {
			valid.Release()
		}
	}()
	switch t := dt.(type) {
	case *arrow.NullType:
		return newData(dt, length, []*memory.Buffer{nil}, nil, length, 0), nil
	case *arrow.BooleanType:
		data, err := joinFixed(ld.vals, 1)
		if err != nil {
			return nil, fmt.Errorf("%v: %w", n, err)
		}
		return newData(dt, length, []*memory.Buffer{valid, bufFrom(data, mem)}, nil, st.nulls, 0), nil
	case arrow.FixedWidthDataType:
		bits := uint64(t.BitWidth())
		data, err := joinFixed(ld.vals, bits)
		if err != nil {
			return nil, fmt.Errorf("%v: %w", n, err)
		}
		return newData(dt, length, []*memory.Buffer{valid, bufFrom(data, mem)}, nil, st.nulls, 0), nil
	case *arrow.StringType, *arrow.BinaryType, *arrow.LargeStringType, *arrow.LargeBinaryType:
		offs, data, err := joinVar(ld.vals)
		if err != nil {
			return nil, fmt.Errorf("%v: %w", n, err)
		}
		var ob []byte
		if t.Layout().Buffers[1].ByteWidth == 8 {
			ob = make([]byte, 8*len(offs))
			for i, o := range offs {
				binary.LittleEndian.PutUint64(ob[8*i:], o)
			}
		} else {
			if uint64(len(data)) > math.MaxInt32 {
				return nil, fmt.Errorf("%v: %d bytes overflow 32-bit offsets", n, len(data))
			}
			ob = make([]byte, 4*len(offs))
			for i, o := range offs {
				binary.LittleEndian.PutUint32(ob[4*i:], uint32(o))
			}
		}
		return newData(dt, length, []*memory.Buffer{valid, bufFrom(ob, mem), bufFrom(data, mem)}, nil, st.nulls, 0), nil
	case *arrow.FixedSizeListType:
		et, ok := t.Elem().(arrow.FixedWidthDataType)
		if !ok || t.Elem().ID() == arrow.BOOL {
			return nil, unsupportedErr("%v: fixed-size list of %v is not supported", n, t.Elem())
		}
		dim := uint64(t.Len())
		if ld.fslDim != 0 && ld.fslDim != dim {
			return nil, fmt.Errorf("%v: file has %d items per list, type says %d", n, ld.fslDim, dim)
		}
		ib := uint64(et.BitWidth())
		data, err := joinFixed(ld.vals, dim*ib)
		if err != nil {
			return nil, fmt.Errorf("%v: %w", n, err)
		}
		nitems := uint64(length) * dim
		ibits, inulls, err := itemValidity(ld, dim, nitems, mem)
		if err != nil {
			return nil, fmt.Errorf("%v: %w", n, err)
		}
		child := newData(t.Elem(), int(nitems), []*memory.Buffer{ibits, bufFrom(data, mem)}, nil, inulls, 0)
		defer child.Release()
		return newData(dt, length, []*memory.Buffer{valid}, []arrow.ArrayData{child}, st.nulls, 0), nil
	}
	return nil, unsupportedErr("%v: Arrow type %v is not supported", n, dt)
}

// dictionaryEncode turns decoded values into a dictionary array of type t,
// with items in order of first appearance.
func dictionaryEncode(t *arrow.DictionaryType, values arrow.Array, mem memory.Allocator) (arrow.ArrayData, error) {
	defer values.Release()
	b := array.NewDictionaryBuilder(mem, t)
	defer b.Release()
	for i := 0; i < values.Len(); i++ {
		if values.IsNull(i) {
			b.AppendNull()
			continue
		}
		var err error
		switch v := values.(type) {
		case *array.String:
			err = b.(*array.BinaryDictionaryBuilder).AppendString(v.Value(i))
		case *array.Binary:
			err = b.(*array.BinaryDictionaryBuilder).Append(v.Value(i))
		default:
			return nil, unsupportedErr("dictionary of %v values is not supported", t.ValueType)
		}
		if err != nil {
			return nil, err
		}
	}
	a := b.NewArray()
	defer a.Release()
	d := a.Data()
	d.Retain()
	return d, nil
}

// newData is array.NewData that hands over the buffers: NewData retains
// them, so our references are dropped here.
func newData(dt arrow.DataType, length int, bufs []*memory.Buffer, children []arrow.ArrayData, nulls, offset int) arrow.ArrayData {
	d := array.NewData(dt, length, bufs, children, nulls, offset)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	return d
}

// itemValidity builds the item validity bitmap of fixed-size lists from
// per-value validity (ceil(dim/8) bytes per value), nil when all valid.
func itemValidity(ld *leafData, dim, nitems uint64, mem memory.Allocator) (*memory.Buffer, int, error) {
	has := false
	for _, v := range ld.fslVal {
		has = has || v != nil
	}
	if !has {
		return nil, 0, nil
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int((nitems + 7) / 8))
	out := buf.Bytes()
	clear(out)
	vb := (dim + 7) / 8
	var row uint64
	for p, b := range ld.vals {
		v := ld.fslVal[p]
		if v != nil && uint64(len(v)) < b.n*vb {
			buf.Release()
			return nil, 0, fmt.Errorf("item validity holds %d bytes for %d values", len(v), b.n)
		}
		for r := uint64(0); r < b.n; r++ {
			base := (row + r) * dim
			if v != nil && dim%8 == 0 {
				copy(out[base/8:], v[r*vb:(r+1)*vb])
				continue
			}
			for k := uint64(0); k < dim; k++ {
				if v == nil || v[r*vb+k/8]>>(k%8)&1 == 1 {
					out[(base+k)/8] |= 1 << ((base + k) % 8)
				}
			}
		}
		row += b.n
	}
	nulls := int(nitems) - bitutil.CountSetBits(out, 0, int(nitems))
	if nulls == 0 {
		buf.Release()
		return nil, 0, nil
	}
	return buf, nulls, nil
}
