package incremental

import (
	"context"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/mvd-project/mvd/lance"
)

// oldRows are current view rows of updated source rows, by source row id.
type oldRows struct {
	recs []arrow.RecordBatch
	at   map[uint64][2]int // source row id -> (batch, row)
}

// viewRows takes the view rows of the held source rows srcs.
func viewRows(ctx context.Context, in Input, srcs *roaring64.Bitmap) (*oldRows, error) {
	o := &oldRows{at: map[uint64][2]int{}}
	if srcs.IsEmpty() {
		return o, nil
	}
	vids, _ := in.Index.ViewRows(srcs)
	cols := make([]string, 0, in.Plan.Schema().NumFields())
	for _, f := range in.Plan.Schema().Fields() {
		cols = append(cols, f.Name)
	}
	recs, _, err := in.ViewAt.TakeAll(ctx, vids, lance.ScanOptions{Columns: cols, Mem: in.Mem})
	if err != nil {
		return nil, fmt.Errorf("take the view rows of updated source rows: %w", err)
	}
	o.recs = recs
	for b, r := range recs {
		src, ok := r.Column(int(r.NumCols()) - 1).(*array.Uint64)
		if !ok {
			return o, fmt.Errorf("view column %s is not uint64", r.Schema().Field(int(r.NumCols())-1).Name)
		}
		for i := 0; i < src.Len(); i++ {
			o.at[src.Value(i)] = [2]int{b, i}
		}
	}
	return o, nil
}

// same reports whether the view row of source row s equals row i of the
// freshly computed view batch rec (every column but the provenance).
func (o *oldRows) same(s uint64, rec arrow.RecordBatch, i int) bool {
	at, ok := o.at[s]
	if !ok {
		return false
	}
	old := o.recs[at[0]]
	for c := 0; c < int(rec.NumCols())-1; c++ {
		l, r := old.Column(c), rec.Column(c)
		if !arrow.TypeEqual(l.DataType(), r.DataType()) {
			return false
		}
		if !array.SliceEqual(l, int64(at[1]), int64(at[1]+1), r, int64(i), int64(i+1)) {
			return false
		}
	}
	return true
}

// empty reports whether no view row was taken (nothing can be unchanged).
func (o *oldRows) empty() bool { return len(o.at) == 0 }

func (o *oldRows) release() {
	for _, r := range o.recs {
		r.Release()
	}
}
