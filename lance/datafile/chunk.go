package datafile

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ReadFieldChunk decodes top-level field fieldID from row start to the end
// of the page holding start (the nearest page end over the field's
// columns), and returns the array with the rows [lo, hi) it holds (lo =
// start < hi). Sequential scans call it once per chunk and slice batches
// out of it, so every page is decoded once; memory is bounded by the page
// size. A field the file does not contain reads as nulls up to maxRows rows.
func (r *Reader) ReadFieldChunk(ctx context.Context, fieldID int32, dt arrow.DataType, start, maxRows uint64, mem memory.Allocator) (arr arrow.Array, lo, hi uint64, err error) {
	return r.readFieldChunk(ctx, fieldID, dt, start, maxRows, false, mem)
}

// ReadFieldRange is ReadFieldChunk that stops at start+maxRows too: only
// the mini-block chunks holding those rows are decoded, not the whole page,
// which suits a reader that may stop after a few batches (a capped view's
// scan). Reading a page this way in consecutive ranges decodes the chunks
// at the ranges' edges twice.
func (r *Reader) ReadFieldRange(ctx context.Context, fieldID int32, dt arrow.DataType, start, maxRows uint64, mem memory.Allocator) (arr arrow.Array, lo, hi uint64, err error) {
	return r.readFieldChunk(ctx, fieldID, dt, start, maxRows, true, mem)
}

func (r *Reader) readFieldChunk(ctx context.Context, fieldID int32, dt arrow.DataType, start, maxRows uint64, narrow bool, mem memory.Allocator) (arr arrow.Array, lo, hi uint64, err error) {
	if dt == nil {
		return nil, 0, 0, fmt.Errorf("read %s field %d: no Arrow type given", r.name, fieldID)
	}
	if start >= r.numRows {
		return nil, 0, 0, fmt.Errorf("read %s field %d at row %d: file has %d rows", r.name, fieldID, start, r.numRows)
	}
	if r.legacy != nil {
		return r.legacyChunk(ctx, fieldID, dt, start, maxRows, narrow, mem)
	}
	node, ok := r.tree.byID[fieldID]
	if !ok {
		n := min(max(maxRows, 1), r.numRows-start)
		return array.MakeArrayOfNull(mem, dt, int(n)), start, start + n, nil
	}
	if node.f.ParentID >= 0 {
		return nil, 0, 0, fmt.Errorf("read %s field %d: not a top-level field", r.name, fieldID)
	}
	end, err := r.pageEnd(node, start)
	if err != nil {
		return nil, 0, 0, decodeErr(r.name, err)
	}
	if narrow {
		end = min(end, start+max(maxRows, 1))
	}
	a, rg, err := r.readRange(ctx, node, dt, rowRange{start, end}, mem)
	if err != nil {
		return nil, 0, 0, decodeErr(r.name, err)
	}
	return a, rg.lo, rg.hi, nil
}
