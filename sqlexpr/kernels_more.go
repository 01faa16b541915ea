package sqlexpr

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// matchKernel applies a string predicate (LIKE with a constant pattern).
func matchKernel(mem memory.Allocator, a *array.String, f func(string) bool) arrow.Array {
	valid, nulls := validity(mem, a.Len(), a)
	return newBoolArray(mem, a.Len(), valid, nulls, func(i int) bool { return a.IsValid(i) && f(a.Value(i)) })
}

// inKernel is `x [NOT] IN (constants)` with SQL NULL rules: NULL when x
// is NULL, or when x matches nothing and the list holds a NULL.
func inKernel(mem memory.Allocator, x arrow.Array, list []*node, not bool) (arrow.Array, error) {
	set := make(map[any]bool, len(list))
	sawNull := false
	var sawNaN [2]bool // by sign bit: NaNs of one sign are equal (nanCmp)
	for _, c := range list {
		if c.val == nil {
			sawNull = true
			continue
		}
		if f, ok := c.val.(float64); ok && math.IsNaN(f) {
			sawNaN[signIdx(f)] = true
			continue
		}
		set[c.val] = true
	}
	get, err := getter(x)
	if err != nil {
		return nil, err
	}
	n := x.Len()
	vals := make([]bool, n)
	ok := make([]bool, n)
	nulls := 0
	for i := 0; i < n; i++ {
		v := get(i)
		switch {
		case v == nil:
		case set[v] || (isNaN(v) && sawNaN[signIdx(v.(float64))]):
			vals[i], ok[i] = !not, true
		case sawNull:
		default:
			vals[i], ok[i] = not, true
		}
		if !ok[i] {
			nulls++
		}
	}
	var valid *memory.Buffer
	if nulls > 0 {
		valid = bitmapOf(mem, ok)
	}
	return newBoolArray(mem, n, valid, nulls, func(i int) bool { return vals[i] }), nil
}

// castKernelOK reports the numeric casts the cast kernel does: any
// number to a float, and integers to an integer type that holds every
// value of the source.
func castKernelOK(from, to arrow.DataType) bool {
	switch {
	case !isNumeric(from) || !isNumeric(to):
		return false
	case isFloat(to):
		return true
	case isFloat(from):
		return false
	case isSigned(from) == isSigned(to):
		return intWidth(to) >= intWidth(from)
	}
	return isUnsigned(from) && isSigned(to) && intWidth(to) > intWidth(from)
}

// castKernel converts a numeric array to a wider numeric type (one that
// holds every source value, so no row can fail).
func castKernel(mem memory.Allocator, a arrow.Array, to arrow.DataType) (arrow.Array, error) {
	switch to.ID() {
	case arrow.INT16:
		return castTo[int16](mem, a, to)
	case arrow.INT32:
		return castTo[int32](mem, a, to)
	case arrow.INT64:
		return castTo[int64](mem, a, to)
	case arrow.UINT16:
		return castTo[uint16](mem, a, to)
	case arrow.UINT32:
		return castTo[uint32](mem, a, to)
	case arrow.UINT64:
		return castTo[uint64](mem, a, to)
	case arrow.FLOAT32:
		return castTo[float32](mem, a, to)
	case arrow.FLOAT64:
		return castTo[float64](mem, a, to)
	}
	return nil, fmt.Errorf("%w: no cast kernel to %s", ErrUnsupported, to)
}

func castTo[T number](mem memory.Allocator, a arrow.Array, to arrow.DataType) (arrow.Array, error) {
	n := a.Len()
	out := memory.NewResizableBuffer(mem)
	out.Resize(n * to.(arrow.FixedWidthDataType).BitWidth() / 8)
	dst := arrow.GetData[T](out.Bytes())[:n]
	switch a.DataType().ID() {
	case arrow.INT8:
		convertNum(numValues[int8](a), dst)
	case arrow.INT16:
		convertNum(numValues[int16](a), dst)
	case arrow.INT32:
		convertNum(numValues[int32](a), dst)
	case arrow.INT64:
		convertNum(numValues[int64](a), dst)
	case arrow.UINT8:
		convertNum(numValues[uint8](a), dst)
	case arrow.UINT16:
		convertNum(numValues[uint16](a), dst)
	case arrow.UINT32:
		convertNum(numValues[uint32](a), dst)
	case arrow.UINT64:
		convertNum(numValues[uint64](a), dst)
	case arrow.FLOAT32:
		convertNum(numValues[float32](a), dst)
	case arrow.FLOAT64:
		convertNum(numValues[float64](a), dst)
	default:
		out.Release()
		return nil, fmt.Errorf("%w: no cast kernel from %s", ErrUnsupported, a.DataType())
	}
	valid, nulls := validity(mem, n, a)
	data := array.NewData(to, n, []*memory.Buffer{valid, out}, nil, nulls, 0)
	defer data.Release()
	if valid != nil {
		valid.Release()
	}
	out.Release()
	return array.MakeFromData(data), nil
}

func convertNum[F, T number](src []F, dst []T) {
	for i, v := range src {
		dst[i] = T(v)
	}
}

// bitmapOf packs bools into a validity bitmap.
func bitmapOf(mem memory.Allocator, bits []bool) *memory.Buffer {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize((len(bits) + 7) / 8)
	b := buf.Bytes()
	for i := range b {
		b[i] = 0
	}
	for i, v := range bits {
		if v {
			b[i/8] |= 1 << (i % 8)
		}
	}
	return buf
}

// divNum computes / or % into dst. An integer division by zero in a
// non-NULL row fails like DataFusion; NULL rows are skipped (Go would
// panic on them). Floats follow IEEE 754, % as fmod.
func divNum[T number](op string, swapped, float, unsigned bool, dst, lv []T, r arrow.Array, c any, valid *memory.Buffer) error {
	var rv []T
	var cv T
	if r != nil {
		rv = numValues[T](r)
	} else {
		cv = toNum[T](c)
	}
	var vb []byte
	if valid != nil {
		vb = valid.Bytes()
	}
	for i := range dst {
		x, y := lv[i], cv
		switch {
		case rv != nil:
			y = rv[i]
		case swapped:
			x, y = cv, lv[i]
		}
		switch {
		case float && op == "/":
			dst[i] = x / y
		case float:
			dst[i] = T(rustMod(float64(x), float64(y)))
		case y == 0:
			if vb == nil || bitutil.BitIsSet(vb, i) {
				return errDivZero
			}
			dst[i] = 0
		case op == "/":
			dst[i] = x / y
		case unsigned:
			dst[i] = T(uint64(x) % uint64(y))
		default:
			dst[i] = T(int64(x) % int64(y))
		}
	}
	return nil
}

func signIdx(f float64) int {
	if math.Signbit(f) {
		return 1
	}
	return 0
}

func isNaN(v any) bool {
	f, ok := v.(float64)
	return ok && math.IsNaN(f)
}
