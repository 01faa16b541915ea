package datafile

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/mvd-project/mvd/lance/internal/pb/enc20pb"
)

// Format 2.0 stores one column per field, parents included: a list column
// holds end offsets into its item column, a struct column holds nothing
// (2.0 cannot store struct nulls). Reading is by exact row range, recursing
// into children with the item range a list selects.

// arrayEncodingName is the type name of 2.0 page encodings.
const arrayEncodingName = "lance.encodings.ArrayEncoding"

// readRange20 decodes exactly the rows of want.
func (r *Reader) readRange20(ctx context.Context, node *fieldNode, dt arrow.DataType, want rowRange, mem memory.Allocator) (arrow.Array, rowRange, error) {
	d, err := r.read20(ctx, node, dt, want, false, mem)
	if err != nil {
		return nil, rowRange{}, fmt.Errorf("read %s: %w", r.name, err)
	}
	defer d.Release()
	return array.MakeFromData(d), want, nil
}

// page20 is a decoded 2.0 page.
type page20 struct {
	n     uint64
	valid []bool // nil: all valid
	nulls int
	vals  block
	// itemValid is per-value item validity of fixed-size lists, packed per
	// value as in full-zip ((dim+7)/8 bytes each).
	itemValid []byte
	dim       uint64
	// ends are list end offsets (global item indexes) for list pages.
	ends []uint64
}

func (r *Reader) encoding20(c, p int) (*enc20pb.ArrayEncoding, [][]byte, error) {
	pg := r.cols[c].Pages[p]
	if pg.GetEncoding().GetDirect() == nil {
		return nil, nil, fmt.Errorf("page encoding is not stored inline")
	}
	var a anypb.Any
	if err := proto.Unmarshal(pg.GetEncoding().GetDirect().GetEncoding(), &a); err != nil {
		return nil, nil, fmt.Errorf("decode page encoding: %w", err)
	}
	if a.MessageName() != arrayEncodingName {
		return nil, nil, fmt.Errorf("page encoding is %q, want %s", a.TypeUrl, arrayEncodingName)
	}
	var e enc20pb.ArrayEncoding
	if err := proto.Unmarshal(a.Value, &e); err != nil {
		return nil, nil, fmt.Errorf("decode array encoding: %w", err)
	}
	if err := checkKnown(e.ProtoReflect()); err != nil {
		return nil, nil, err
	}
	bufs := make([][]byte, len(pg.BufferOffsets))
	for i := range bufs {
		b, err := r.readSpan(span{pg.BufferOffsets[i], pg.BufferSizes[i]})
		if err != nil {
			return nil, nil, fmt.Errorf("read buffer %d: %w", i, err)
		}
		bufs[i] = b
	}
	return &e, bufs, nil
}

// pagesOf lists the pages of column c overlapping rg with their first rows.
func (r *Reader) pagesOf(c int, rg rowRange, inList bool) ([]int, []uint64, error) {
	s, err := r.pageStartsOf(c, !inList)
	if err != nil {
		return nil, nil, err
	}
	var pages []int
	if rg.hi > s[len(s)-1] {
		return nil, nil, fmt.Errorf("column %d: rows up to %d, column has %d", c, rg.hi, s[len(s)-1])
	}
	for p := 0; p+1 < len(s); p++ {
		if s[p+1] > rg.lo && s[p] < rg.hi {
			pages = append(pages, p)
		}
	}
	return pages, s, nil
}

// read20 builds the Arrow data of rows rg of node.
func (r *Reader) read20(ctx context.Context, node *fieldNode, dt arrow.DataType, rg rowRange, inList bool, mem memory.Allocator) (arrow.ArrayData, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := int(rg.hi - rg.lo)
	c := node.column
	if err := r.colErr[c]; err != nil {
		return nil, fmt.Errorf("%v column %d: %w", node, c, err)
	}
	lt := node.f.LogicalType
	switch t := dt.(type) {
	case *arrow.StructType:
		if !isStructType(lt) || len(t.Fields()) != len(node.children) {
			return nil, fmt.Errorf("%v is %q in the file but %v was asked for", node, lt, dt)
		}
		// The parent column must agree on the row count; its pages carry
		// no data because 2.0 has no struct nulls.
		if _, _, err := r.pagesOf(c, rg, inList); err != nil {
			return nil, fmt.Errorf("%v: %w", node, err)
		}
		for p := range r.cols[c].Pages {
			e, _, err := r.encoding20(c, p)
			if err != nil {
				return nil, fmt.Errorf("%v column %d page %d: %w", node, c, p, err)
			}
			if e.GetStruct() == nil {
				return nil, fmt.Errorf("%v column %d page %d: struct column with encoding %T", node, c, p, e.GetArrayEncoding())
			}
		}
		children := make([]arrow.ArrayData, 0, len(node.children))
		defer func() {
			for _, ch := range children {
				ch.Release()
			}
		}()
		for i, ch := range node.children {
			d, err := r.read20(ctx, ch, t.Field(i).Type, rg, inList, mem)
			if err != nil {
				return nil, err
			}
			children = append(children, d)
		}
		return newData(dt, n, []*memory.Buffer{nil}, children, 0, 0), nil
	case *arrow.ListType, *arrow.LargeListType:
		if !isListType(lt) {
			return nil, fmt.Errorf("%v is %q in the file but %v was asked for", node, lt, dt)
		}
		return r.readList20(ctx, node, dt, rg, inList, mem)
	}
	if len(node.children) != 0 {
		return nil, fmt.Errorf("%v is %q in the file but %v was asked for", node, lt, dt)
	}
	pages, starts, err := r.pagesOf(c, rg, inList)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", node, err)
	}
	var parts []arrow.Array
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for _, p := range pages {
		pd, err := r.decodePage20(c, p, dt)
		if err != nil {
			return nil, fmt.Errorf("%v column %d page %d: %w", node, c, p, err)
		}
		d, err := leaf20(node, dt, pd, mem)
		if err != nil {
			return nil, fmt.Errorf("column %d page %d: %w", c, p, err)
		}
		a := array.MakeFromData(d)
		d.Release()
		lo := max(rg.lo, starts[p]) - starts[p]
		hi := min(rg.hi, starts[p+1]) - starts[p]
		parts = append(parts, array.NewSlice(a, int64(lo), int64(hi)))
		a.Release()
	}
	return concatData(parts, dt, mem)
}

// concatData joins page slices into one ArrayData.
func concatData(parts []arrow.Array, dt arrow.DataType, mem memory.Allocator) (arrow.ArrayData, error) {
	if len(parts) == 0 {
		a := array.MakeArrayOfNull(mem, dt, 0)
		defer a.Release()
		d := a.Data()
		d.Retain()
		return d, nil
	}
	a, err := array.Concatenate(parts, mem)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	d := a.Data()
	d.Retain()
	return d, nil
}

// leaf20 turns a decoded 2.0 page into Arrow data via the shared leaf
// builder.
func leaf20(node *fieldNode, dt arrow.DataType, pd *page20, mem memory.Allocator) (arrow.ArrayData, error) {
	st := nodeState{valid: pd.valid, nulls: pd.nulls}
	if st.valid == nil {
		st.valid = make([]bool, pd.n)
		for i := range st.valid {
			st.valid[i] = true
		}
	}
	ld := &leafData{states: []nodeState{st}, vals: []block{pd.vals}, nvals: pd.n, fslDim: pd.dim}
	ld.fslVal = [][]byte{pd.itemValid}
	return buildLeaf(node, dt, ld, &ld.states[0], mem)
}

// readList20 reads the list column's end offsets for rg, then the item
// rows they select.
func (r *Reader) readList20(ctx context.Context, node *fieldNode, dt arrow.DataType, rg rowRange, inList bool, mem memory.Allocator) (arrow.ArrayData, error) {
	c := node.column
	pages, starts, err := r.pagesOf(c, rg, inList)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", node, err)
	}
	n := rg.hi - rg.lo
	valid := make([]bool, 0, n)
	ends := make([]uint64, 0, n)
	nulls := 0
	// The first row starts where the previous row ended: decode the page
	// before the range when the range starts on a page boundary.
	var first uint64
	if len(pages) > 0 && rg.lo > 0 {
		p := pages[0]
		if starts[p] == rg.lo {
			if p == 0 {
				return nil, fmt.Errorf("%v: row %d starts page 0", node, rg.lo)
			}
			prev, err := r.decodePage20(c, p-1, dt)
			if err != nil {
				return nil, fmt.Errorf("%v column %d page %d: %w", node, c, p-1, err)
			}
			if len(prev.ends) == 0 {
				return nil, fmt.Errorf("%v column %d page %d: empty list page", node, c, p-1)
			}
			first = prev.ends[len(prev.ends)-1]
		}
	}
	for i, p := range pages {
		pd, err := r.decodePage20(c, p, dt)
		if err != nil {
			return nil, fmt.Errorf("%v column %d page %d: %w", node, c, p, err)
		}
		if pd.ends == nil {
			return nil, fmt.Errorf("%v column %d page %d: not a list page", node, c, p)
		}
		lo := max(rg.lo, starts[p]) - starts[p]
		hi := min(rg.hi, starts[p+1]) - starts[p]
		if i == 0 && lo > 0 {
			first = pd.ends[lo-1]
		}
		for k := lo; k < hi; k++ {
			v := pd.valid == nil || pd.valid[k]
			valid = append(valid, v)
			if !v {
				nulls++
			}
			ends = append(ends, pd.ends[k])
		}
	}
	prev := first
	for i, e := range ends {
		if e < prev {
			return nil, fmt.Errorf("%v: list end %d of row %d precedes %d", node, e, rg.lo+uint64(i), prev)
		}
		prev = e
	}
	itemRg := rowRange{first, prev}
	child := node.children[0]
	cd, err := r.read20(ctx, child, dt.(arrow.ListLikeType).Elem(), itemRg, true, mem)
	if err != nil {
		return nil, err
	}
	defer cd.Release()
	var offs []byte
	if _, large := dt.(*arrow.LargeListType); large {
		offs = binary.LittleEndian.AppendUint64(nil, 0)
		for _, e := range ends {
			offs = binary.LittleEndian.AppendUint64(offs, e-first)
		}
	} else {
		if itemRg.hi-itemRg.lo > 1<<31-1 {
			return nil, fmt.Errorf("%v: %d items overflow 32-bit offsets", node, itemRg.hi-itemRg.lo)
		}
		offs = binary.LittleEndian.AppendUint32(nil, 0)
		for _, e := range ends {
			offs = binary.LittleEndian.AppendUint32(offs, uint32(e-first))
		}
	}
	return newData(dt, int(n), []*memory.Buffer{bitmap(valid, nulls, mem), bufFrom(offs, mem)}, []arrow.ArrayData{cd}, nulls, 0), nil
}
