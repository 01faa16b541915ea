package bench

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// rowJSON returns row i of rec the way bench_scan.mjs rows prints LanceDB's
// rows: 64-bit integers and timestamps as decimal strings (JSON numbers
// would round them), lists as arrays, nulls as nil. Only columns named in
// keep are included.
func rowJSON(rec arrow.RecordBatch, i int, keep func(string) bool) (map[string]any, error) {
	out := map[string]any{}
	for c, f := range rec.Schema().Fields() {
		if !keep(f.Name) {
			continue
		}
		v, err := valueJSON(rec.Column(c), i)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		out[f.Name] = v
	}
	return out, nil
}

func valueJSON(a arrow.Array, i int) (any, error) {
	if a.IsNull(i) {
		return nil, nil
	}
	switch a := a.(type) {
	case *array.Int64:
		return strconv.FormatInt(a.Value(i), 10), nil
	case *array.Uint64:
		return strconv.FormatUint(a.Value(i), 10), nil
	case *array.Timestamp:
		return strconv.FormatInt(int64(a.Value(i)), 10), nil
	case *array.Float64:
		return a.Value(i), nil
	case *array.Float32:
		return float64(a.Value(i)), nil
	case *array.String:
		return a.Value(i), nil
	case *array.List:
		lo, hi := a.ValueOffsets(i)
		return listJSON(a.ListValues(), int(lo), int(hi))
	case *array.FixedSizeList:
		lo, hi := a.ValueOffsets(i)
		return listJSON(a.ListValues(), int(lo), int(hi))
	}
	return nil, fmt.Errorf("type %v is not handled", a.DataType())
}

func listJSON(values arrow.Array, lo, hi int) (any, error) {
	out := make([]any, 0, hi-lo)
	for j := lo; j < hi; j++ {
		v, err := valueJSON(values, j)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
