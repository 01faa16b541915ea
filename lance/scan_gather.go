package lance

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// gatherRows returns the rows of chunk (whose first row is offset base) at
// the physical offsets phys (ascending), as an array of type typ: a
// dictionary chunk is expanded to its values' type. Fixed-width and
// string chunks are gathered directly; others go through Arrow's take.
func gatherRows(chunk arrow.Array, base uint64, phys []uint64, typ arrow.DataType, mem memory.Allocator) (arrow.Array, error) {
	idx := make([]int, len(phys))
	for i, p := range phys {
		idx[i] = int(p - base)
	}
	if d, ok := chunk.(*array.Dictionary); ok && typ.ID() != arrow.DICTIONARY {
		// A dictionary the reader kept for the filter: expand the rows.
		codes, ok := d.Indices().(*array.Int32)
		if !ok {
			return nil, fmt.Errorf("gather: dictionary indices of type %s", d.Indices().DataType())
		}
		vals := d.Dictionary()
		if codes.NullN() > 0 {
			// The reader makes dictionary chunks of all-valid pages only.
			return nil, fmt.Errorf("gather: dictionary chunk with null indices")
		}
		for i, k := range idx {
			idx[i] = int(codes.Value(k))
		}
		return gatherIndices(vals, idx, typ, mem)
	}
	return gatherIndices(chunk, idx, typ, mem)
}

// gatherIndices returns a's values at idx (each within a) as type typ.
func gatherIndices(a arrow.Array, idx []int, typ arrow.DataType, mem memory.Allocator) (arrow.Array, error) {
	if !arrow.TypeEqual(a.DataType(), typ) {
		return nil, fmt.Errorf("gather: chunk of type %s for a column of type %s", a.DataType(), typ)
	}
	if id := typ.ID(); id == arrow.DICTIONARY || id == arrow.EXTENSION || len(a.Data().Children()) > 0 {
		return takeRows(a, idx, mem, typ)
	}
	n := len(idx)
	var valid *memory.Buffer
	nulls := 0
	if a.NullN() > 0 {
		valid = memory.NewResizableBuffer(mem)
		valid.Resize(int(bitutil.BytesForBits(int64(n))))
		vb := valid.Bytes()
		clear(vb)
		for i, k := range idx {
			if a.IsValid(k) {
				bitutil.SetBit(vb, i)
			} else {
				nulls++
			}
		}
	}
	release := func() {
		if valid != nil {
			valid.Release()
		}
	}
	switch t := typ.(type) {
	case *arrow.StringType, *arrow.BinaryType:
		offs := arrow.Int32Traits.CastFromBytes(a.Data().Buffers()[1].Bytes())[a.Data().Offset():]
		data := a.Data().Buffers()[2].Bytes()
		total := 0
		for _, k := range idx {
			total += int(offs[k+1] - offs[k])
		}
		if total > 1<<31-1 {
			release()
			return takeRows(a, idx, mem, typ)
		}
		ob := make([]byte, 4*(n+1))
		o := arrow.Int32Traits.CastFromBytes(ob)
		out := make([]byte, 0, total)
		for i, k := range idx {
			out = append(out, data[offs[k]:offs[k+1]]...)
			o[i+1] = int32(len(out))
		}
		d := array.NewData(typ, n, []*memory.Buffer{valid, memory.NewBufferBytes(ob), memory.NewBufferBytes(out)}, nil, nulls, 0)
		defer d.Release()
		release()
		return array.MakeFromData(d), nil
	case arrow.FixedWidthDataType:
		w := t.BitWidth()
		if w%8 != 0 || len(a.Data().Buffers()) != 2 {
			release()
			return takeRows(a, idx, mem, typ)
		}
		bw := w / 8
		src := a.Data().Buffers()[1].Bytes()[a.Data().Offset()*bw:]
		out := make([]byte, n*bw)
		switch bw {
		case 8:
			s, o := arrow.Uint64Traits.CastFromBytes(src), arrow.Uint64Traits.CastFromBytes(out)
			for i, k := range idx {
				o[i] = s[k]
			}
		case 4:
			s, o := arrow.Uint32Traits.CastFromBytes(src), arrow.Uint32Traits.CastFromBytes(out)
			for i, k := range idx {
				o[i] = s[k]
			}
		default:
			for i, k := range idx {
				copy(out[i*bw:(i+1)*bw], src[k*bw:(k+1)*bw])
			}
		}
		d := array.NewData(typ, n, []*memory.Buffer{valid, memory.NewBufferBytes(out)}, nil, nulls, 0)
		defer d.Release()
		release()
		return array.MakeFromData(d), nil
	}
	release()
	return takeRows(a, idx, mem, typ)
}

// takeRows is Arrow's take of a at idx.
func takeRows(a arrow.Array, idx []int, mem memory.Allocator, typ arrow.DataType) (arrow.Array, error) {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.Reserve(len(idx))
	for _, k := range idx {
		b.UnsafeAppend(int64(k))
	}
	ia := b.NewArray()
	defer ia.Release()
	ctx := compute.WithAllocator(context.Background(), mem)
	out, err := compute.TakeArray(ctx, a, ia)
	if err != nil {
		return nil, fmt.Errorf("gather rows: %w", err)
	}
	if !arrow.TypeEqual(out.DataType(), typ) {
		out.Release()
		return nil, fmt.Errorf("gather: rows of type %s for a column of type %s", out.DataType(), typ)
	}
	return out, nil
}
