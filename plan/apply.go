package plan

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Apply turns one source batch into a view batch: the rows where the
// filter is TRUE, projected, with __source_row_id taken from the batch's
// _rowid column (scan or take with row metadata). The caller releases the
// result, which may have no rows. The row cap is the caller's business.
func (p *Plan) Apply(mem memory.Allocator, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	ids := rec.Schema().FieldIndices(RowID)
	if len(ids) == 0 {
		return nil, fmt.Errorf("plan: source batch has no %s column", RowID)
	}
	rec, err := p.filterRows(mem, rec)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	cols, err := p.project(mem, rec)
	if err != nil {
		return nil, err
	}
	rid := rec.Column(rec.Schema().FieldIndices(RowID)[0])
	rid.Retain()
	cols = append(cols, rid)
	defer releaseAll(cols)
	return array.NewRecordBatch(p.schema, cols, rec.NumRows()), nil
}

// filterRows returns the rows where the filter holds (rec itself, retained,
// without a filter).
func (p *Plan) filterRows(mem memory.Allocator, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if p.filter == nil {
		rec.Retain()
		return rec, nil
	}
	out, err := p.filter.Filter(mem, rec)
	if err != nil {
		return nil, fmt.Errorf("view filter: %w", err)
	}
	return out, nil
}

// project evaluates every projection over rec.
func (p *Plan) project(mem memory.Allocator, rec arrow.RecordBatch) ([]arrow.Array, error) {
	cols := make([]arrow.Array, 0, len(p.projs)+1)
	for i, c := range p.projs {
		a, err := c.EvalWith(mem, rec)
		if err != nil {
			releaseAll(cols)
			return nil, fmt.Errorf("view column '%s': %w", p.def.Projections[i].Output, err)
		}
		if !arrow.TypeEqual(a.DataType(), p.schema.Field(i).Type) {
			// Nested field metadata stripped from the type: same layout.
			data := array.NewData(p.schema.Field(i).Type, a.Len(), a.Data().Buffers(), a.Data().Children(), a.NullN(), a.Data().Offset())
			b := array.MakeFromData(data)
			data.Release()
			a.Release()
			a = b
		}
		cols = append(cols, a)
	}
	return cols, nil
}

func releaseAll(as []arrow.Array) {
	for _, a := range as {
		a.Release()
	}
}
