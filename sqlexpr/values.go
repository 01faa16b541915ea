package sqlexpr

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Row values in the scalar path are plain Go values:
//
//	nil           NULL
//	bool          Boolean
//	int64         every signed integer, Date32 (days), Timestamp (ticks)
//	uint64        every unsigned integer
//	float64       Float32 and Float64 (Float32 results are rounded on store)
//	string        Utf8, LargeUtf8
//	[]byte        Binary, LargeBinary
//	[]any         List, LargeList
//	structVal     Struct (fields in type order)
type structVal []any

// getter returns a function reading row i of arr as a Go value.
func getter(arr arrow.Array) (func(i int) any, error) {
	wrap := func(f func(i int) any) func(i int) any {
		return func(i int) any {
			if arr.IsNull(i) {
				return nil
			}
			return f(i)
		}
	}
	switch a := arr.(type) {
	case *array.Null:
		return func(int) any { return nil }, nil
	case *array.Boolean:
		return wrap(func(i int) any { return a.Value(i) }), nil
	case *array.Int8:
		return wrap(func(i int) any { return int64(a.Value(i)) }), nil
	case *array.Int16:
		return wrap(func(i int) any { return int64(a.Value(i)) }), nil
	case *array.Int32:
		return wrap(func(i int) any { return int64(a.Value(i)) }), nil
	case *array.Int64:
		return wrap(func(i int) any { return a.Value(i) }), nil
	case *array.Uint8:
		return wrap(func(i int) any { return uint64(a.Value(i)) }), nil
	case *array.Uint16:
		return wrap(func(i int) any { return uint64(a.Value(i)) }), nil
	case *array.Uint32:
		return wrap(func(i int) any { return uint64(a.Value(i)) }), nil
	case *array.Uint64:
		return wrap(func(i int) any { return a.Value(i) }), nil
	case *array.Float32:
		return wrap(func(i int) any { return float64(a.Value(i)) }), nil
	case *array.Float64:
		return wrap(func(i int) any { return a.Value(i) }), nil
	case *array.String:
		return wrap(func(i int) any { return a.Value(i) }), nil
	case *array.LargeString:
		return wrap(func(i int) any { return a.Value(i) }), nil
	case *array.Binary:
		return wrap(func(i int) any { return append([]byte(nil), a.Value(i)...) }), nil
	case *array.LargeBinary:
		return wrap(func(i int) any { return append([]byte(nil), a.Value(i)...) }), nil
	case *array.Date32:
		return wrap(func(i int) any { return int64(a.Value(i)) }), nil
	case *array.Date64:
		return wrap(func(i int) any { return int64(a.Value(i)) / 86400000 }), nil
	case *array.Timestamp:
		return wrap(func(i int) any { return int64(a.Value(i)) }), nil
	case array.ListLike:
		elem, err := getter(a.ListValues())
		if err != nil {
			return nil, err
		}
		return wrap(func(i int) any {
			start, end := a.ValueOffsets(i)
			out := make([]any, 0, end-start)
			for j := start; j < end; j++ {
				out = append(out, elem(int(j)))
			}
			return out
		}), nil
	case *array.Struct:
		fields := make([]func(int) any, a.NumField())
		for k := range fields {
			g, err := getter(a.Field(k))
			if err != nil {
				return nil, err
			}
			fields[k] = g
		}
		return wrap(func(i int) any {
			out := make(structVal, len(fields))
			for k, g := range fields {
				out[k] = g(i)
			}
			return out
		}), nil
	}
	return nil, fmt.Errorf("%w: reading columns of type %s", ErrUnsupported, arr.DataType())
}

// appendValue appends v (a Go value as above, already of type t) to b.
func appendValue(b array.Builder, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	switch bb := b.(type) {
	case *array.BooleanBuilder:
		bb.Append(v.(bool))
	case *array.Int8Builder:
		bb.Append(int8(v.(int64)))
	case *array.Int16Builder:
		bb.Append(int16(v.(int64)))
	case *array.Int32Builder:
		bb.Append(int32(v.(int64)))
	case *array.Int64Builder:
		bb.Append(v.(int64))
	case *array.Uint8Builder:
		bb.Append(uint8(v.(uint64)))
	case *array.Uint16Builder:
		bb.Append(uint16(v.(uint64)))
	case *array.Uint32Builder:
		bb.Append(uint32(v.(uint64)))
	case *array.Uint64Builder:
		bb.Append(v.(uint64))
	case *array.Float32Builder:
		bb.Append(float32(v.(float64)))
	case *array.Float64Builder:
		bb.Append(v.(float64))
	case *array.StringBuilder:
		bb.Append(v.(string))
	case *array.LargeStringBuilder:
		bb.Append(v.(string))
	case *array.BinaryBuilder:
		bb.Append(v.([]byte))
	case *array.Date32Builder:
		bb.Append(arrow.Date32(v.(int64)))
	case *array.TimestampBuilder:
		bb.Append(arrow.Timestamp(v.(int64)))
	case *array.ListBuilder:
		bb.Append(true)
		for _, e := range v.([]any) {
			if err := appendValue(bb.ValueBuilder(), e); err != nil {
				return err
			}
		}
	case *array.LargeListBuilder:
		bb.Append(true)
		for _, e := range v.([]any) {
			if err := appendValue(bb.ValueBuilder(), e); err != nil {
				return err
			}
		}
	case *array.StructBuilder:
		bb.Append(true)
		sv := v.(structVal)
		for k := range sv {
			if err := appendValue(bb.FieldBuilder(k), sv[k]); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("%w: building arrays of type %s", ErrUnsupported, b.Type())
	}
	return nil
}

// fitsInt reports whether v fits the signed integer type id.
func fitsInt(v int64, id arrow.Type) bool {
	switch id {
	case arrow.INT8:
		return v >= math.MinInt8 && v <= math.MaxInt8
	case arrow.INT16:
		return v >= math.MinInt16 && v <= math.MaxInt16
	case arrow.INT32:
		return v >= math.MinInt32 && v <= math.MaxInt32
	}
	return true
}

// fitsUint reports whether v fits the unsigned integer type id.
func fitsUint(v uint64, id arrow.Type) bool {
	switch id {
	case arrow.UINT8:
		return v <= math.MaxUint8
	case arrow.UINT16:
		return v <= math.MaxUint16
	case arrow.UINT32:
		return v <= math.MaxUint32
	}
	return true
}

// wrapInt truncates v to the width of the signed type id, the way
// DataFusion's wrapping arithmetic does.
func wrapInt(v int64, id arrow.Type) int64 {
	switch id {
	case arrow.INT8:
		return int64(int8(v))
	case arrow.INT16:
		return int64(int16(v))
	case arrow.INT32:
		return int64(int32(v))
	}
	return v
}

// wrapUint truncates v to the width of the unsigned type id.
func wrapUint(v uint64, id arrow.Type) uint64 {
	switch id {
	case arrow.UINT8:
		return uint64(uint8(v))
	case arrow.UINT16:
		return uint64(uint16(v))
	case arrow.UINT32:
		return uint64(uint32(v))
	}
	return v
}
