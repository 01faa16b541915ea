package sqlexpr

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Selection evaluates a boolean expression over rec and returns the
// indices of the rows where it is TRUE (FALSE and NULL rows are dropped,
// as SQL WHERE does).
func (c *Compiled) Selection(mem memory.Allocator, rec arrow.RecordBatch) ([]int, error) {
	mask, err := c.mask(mem, rec)
	if err != nil {
		return nil, err
	}
	defer mask.Release()
	out := make([]int, 0, mask.Len()/4)
	for i := 0; i < mask.Len(); i++ {
		if mask.IsValid(i) && mask.Value(i) {
			out = append(out, i)
		}
	}
	return out, nil
}

// Filter evaluates a boolean expression over rec and returns a new batch
// holding only the rows where it is TRUE. The caller releases it.
func (c *Compiled) Filter(mem memory.Allocator, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	mask, err := c.mask(mem, rec)
	if err != nil {
		return nil, err
	}
	defer mask.Release()
	ctx := compute.WithAllocator(context.Background(), mem)
	out, err := compute.FilterRecordBatch(ctx, rec, mask, &compute.FilterOptions{NullSelection: compute.SelectionDropNulls})
	if err != nil {
		return nil, fmt.Errorf("%w: filtering rows: %w", ErrEval, err)
	}
	return out, nil
}

// mask evaluates the predicate as a Boolean array.
func (c *Compiled) mask(mem memory.Allocator, rec arrow.RecordBatch) (*array.Boolean, error) {
	switch c.OutputType().ID() {
	case arrow.BOOL:
	case arrow.NULL:
		// WHERE NULL keeps nothing.
		arr := array.MakeArrayOfNull(mem, tBool, int(rec.NumRows()))
		return arr.(*array.Boolean), nil
	default:
		return nil, fmt.Errorf("%w: filter must be boolean, got %s", ErrType, c.OutputType())
	}
	arr, err := c.EvalWith(mem, rec)
	if err != nil {
		return nil, err
	}
	return arr.(*array.Boolean), nil
}
