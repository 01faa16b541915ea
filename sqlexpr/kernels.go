package sqlexpr

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The vectorized kernels cover what filters and projections use most:
// comparisons and arithmetic on numbers, string comparisons, widening
// numeric casts, IN lists of constants, LIKE with a constant pattern,
// AND/OR/NOT and IS [NOT] NULL. They must give exactly the values of the
// row path (the tests run every differential case both ways).

// number is the set of Go types backing Arrow numeric arrays.
type number interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// vectorizable reports whether n has a vectorized kernel. Its operands
// may be anything: each is evaluated to an array first (by its own kernel
// or as a row-by-row region), so `upper(name) = 'X'` compares with the
// kernel over the row path's output.
func vectorizable(n *node) bool {
	if n.kind != kCall {
		return false
	}
	switch n.op {
	case "=", "<>", "<", "<=", ">", ">=":
		t := n.args[0].typ
		return (isNumeric(t) || t.ID() == arrow.STRING) && !(n.args[0].kind == kLit && n.args[1].kind == kLit)
	case "+", "-", "*", "/", "%":
		return isNumeric(n.typ) && !(n.args[0].kind == kLit && n.args[1].kind == kLit)
	case "like":
		return n.aux != nil && n.args[0].typ.ID() == arrow.STRING && n.args[0].kind != kLit
	case "in":
		t := n.args[0].typ
		if n.args[0].kind == kLit || !(isNumeric(t) || t.ID() == arrow.STRING) {
			return false
		}
		for _, a := range n.args[1:] {
			if a.kind != kLit {
				return false
			}
		}
		return true
	case "cast":
		return castKernelOK(n.args[0].typ, n.typ)
	case "and", "or", "not", "is_null", "is_not_null":
		return true
	}
	return false
}

// vector evaluates n with its kernel.
func (ev *evaluator) vector(n *node) (arrow.Array, error) {
	args := make([]arrow.Array, 0, len(n.args))
	defer func() {
		for _, a := range args {
			a.Release()
		}
	}()
	switch n.op {
	case "like", "in", "cast":
		arr, err := ev.eval(n.args[0])
		if err != nil {
			return nil, err
		}
		args = append(args, arr)
		switch n.op {
		case "like":
			aux := n.aux.(likeAux)
			return matchKernel(ev.mem, arr.(*array.String), func(s string) bool { return aux.match(s) != aux.not }), nil
		case "in":
			return inKernel(ev.mem, arr, n.args[1:], n.aux.(bool))
		}
		return castKernel(ev.mem, arr, n.typ)
	}
	var scalar any
	scalarAt := -1
	for i, a := range n.args {
		if a.kind == kLit && len(n.args) == 2 && (n.op != "and" && n.op != "or") {
			scalar, scalarAt = a.val, i
			continue
		}
		arr, err := ev.eval(a)
		if err != nil {
			return nil, err
		}
		args = append(args, arr)
	}
	rows := ev.rows()
	switch n.op {
	case "is_null", "is_not_null":
		return isNullKernel(ev.mem, args[0], n.op == "is_not_null"), nil
	case "not":
		return notKernel(ev.mem, args[0].(*array.Boolean)), nil
	case "and", "or":
		return kleeneKernel(ev.mem, args[0].(*array.Boolean), args[1].(*array.Boolean), n.op == "and"), nil
	}
	if scalarAt >= 0 && scalar == nil {
		// A NULL constant makes every row NULL.
		return array.MakeArrayOfNull(ev.mem, n.typ, rows), nil
	}
	// Put the array first; remember whether operands were swapped.
	swapped := scalarAt == 0
	op := n.op
	if swapped {
		op = swapOp(op)
	}
	l := args[0]
	var r arrow.Array
	if len(args) > 1 {
		r = args[1]
	}
	switch n.op {
	case "=", "<>", "<", "<=", ">", ">=":
		return compareKernel(ev.mem, op, l, r, scalar)
	}
	return arithKernel(ev.mem, n.op, swapped, n.typ, l, r, scalar)
}

// swapOp mirrors a comparison so that "c op x" can be computed as "x op' c".
func swapOp(op string) string {
	switch op {
	case "<":
		return ">"
	case "<=":
		return ">="
	case ">":
		return "<"
	case ">=":
		return "<="
	}
	return op
}

// validity returns the AND of the validity bitmaps of arrs (nil when no
// input has nulls) and its null count.
func validity(mem memory.Allocator, n int, arrs ...arrow.Array) (*memory.Buffer, int) {
	var buf *memory.Buffer
	for _, a := range arrs {
		if a == nil || a.NullN() == 0 {
			continue
		}
		bm := a.NullBitmapBytes()
		off := int64(a.Data().Offset())
		if buf == nil {
			buf = memory.NewResizableBuffer(mem)
			buf.Resize(int(bitutil.BytesForBits(int64(n))))
			bitutil.CopyBitmap(bm, int(off), n, buf.Bytes(), 0)
			continue
		}
		bitutil.BitmapAnd(buf.Bytes(), bm, 0, off, buf.Bytes(), 0, int64(n))
	}
	if buf == nil {
		return nil, 0
	}
	return buf, n - bitutil.CountSetBits(buf.Bytes(), 0, n)
}

func newBoolArray(mem memory.Allocator, n int, valid *memory.Buffer, nulls int, set func(i int) bool) arrow.Array {
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(int(bitutil.BytesForBits(int64(n))))
	b := vals.Bytes()
	for i := range b {
		b[i] = 0
	}
	for i := 0; i < n; i++ {
		if set(i) {
			bitutil.SetBit(b, i)
		}
	}
	data := array.NewData(tBool, n, []*memory.Buffer{valid, vals}, nil, nulls, 0)
	defer data.Release()
	if valid != nil {
		valid.Release()
	}
	vals.Release()
	return array.MakeFromData(data)
}

func isNullKernel(mem memory.Allocator, a arrow.Array, not bool) arrow.Array {
	return newBoolArray(mem, a.Len(), nil, 0, func(i int) bool { return a.IsNull(i) != not })
}

func notKernel(mem memory.Allocator, a *array.Boolean) arrow.Array {
	valid, nulls := validity(mem, a.Len(), a)
	return newBoolArray(mem, a.Len(), valid, nulls, func(i int) bool { return !a.Value(i) })
}

// kleeneKernel is SQL AND/OR: a FALSE (AND) or TRUE (OR) operand decides
// the row even when the other is NULL.
func kleeneKernel(mem memory.Allocator, l, r *array.Boolean, and bool) arrow.Array {
	n := l.Len()
	if l.NullN() == 0 && r.NullN() == 0 {
		return newBoolArray(mem, n, nil, 0, func(i int) bool {
			if and {
				return l.Value(i) && r.Value(i)
			}
			return l.Value(i) || r.Value(i)
		})
	}
	valid := memory.NewResizableBuffer(mem)
	valid.Resize(int(bitutil.BytesForBits(int64(n))))
	vb := valid.Bytes()
	nulls := 0
	res := make([]bool, n)
	for i := 0; i < n; i++ {
		lv, rv := l.IsValid(i), r.IsValid(i)
		lb, rb := lv && l.Value(i), rv && r.Value(i)
		var ok, v bool
		if and {
			switch {
			case (lv && !lb) || (rv && !rb):
				ok, v = true, false
			case lv && rv:
				ok, v = true, true
			}
		} else {
			switch {
			case lb || rb:
				ok, v = true, true
			case lv && rv:
				ok, v = true, false
			}
		}
		bitutil.SetBitTo(vb, i, ok)
		if !ok {
			nulls++
		}
		res[i] = v
	}
	return newBoolArray(mem, n, valid, nulls, func(i int) bool { return res[i] })
}

// compareKernel compares l with r, or with the constant c when r is nil.
func compareKernel(mem memory.Allocator, op string, l, r arrow.Array, c any) (arrow.Array, error) {
	n := l.Len()
	valid, nulls := validity(mem, n, l, r)
	if ls, ok := l.(*array.String); ok {
		var rs *array.String
		var cs string
		if r != nil {
			rs = r.(*array.String)
		} else {
			cs = c.(string)
		}
		return newBoolArray(mem, n, valid, nulls, func(i int) bool {
			other := cs
			if rs != nil {
				other = rs.Value(i)
			}
			return cmpOp(op, strings.Compare(ls.Value(i), other))
		}), nil
	}
	switch a := l.(type) {
	case *array.Int8:
		return cmpNum(mem, op, a.Int8Values(), r, c, valid, nulls)
	case *array.Int16:
		return cmpNum(mem, op, a.Int16Values(), r, c, valid, nulls)
	case *array.Int32:
		return cmpNum(mem, op, a.Int32Values(), r, c, valid, nulls)
	case *array.Int64:
		return cmpNum(mem, op, a.Int64Values(), r, c, valid, nulls)
	case *array.Uint8:
		return cmpNum(mem, op, a.Uint8Values(), r, c, valid, nulls)
	case *array.Uint16:
		return cmpNum(mem, op, a.Uint16Values(), r, c, valid, nulls)
	case *array.Uint32:
		return cmpNum(mem, op, a.Uint32Values(), r, c, valid, nulls)
	case *array.Uint64:
		return cmpNum(mem, op, a.Uint64Values(), r, c, valid, nulls)
	case *array.Float32:
		return cmpNum(mem, op, a.Float32Values(), r, c, valid, nulls)
	case *array.Float64:
		return cmpNum(mem, op, a.Float64Values(), r, c, valid, nulls)
	}
	if valid != nil {
		valid.Release()
	}
	return nil, fmt.Errorf("%w: no comparison kernel for %s", ErrUnsupported, l.DataType())
}

// numValues returns the values of a numeric array of element type T.
func numValues[T number](a arrow.Array) []T {
	if a.Len() == 0 {
		return nil
	}
	return arrow.GetData[T](a.Data().Buffers()[1].Bytes())[a.Data().Offset() : a.Data().Offset()+a.Len()]
}

// toNum converts a row-path constant to T.
func toNum[T number](c any) T {
	switch v := c.(type) {
	case int64:
		return T(v)
	case uint64:
		return T(v)
	case float64:
		return T(v)
	}
	return 0
}

// cmpNum is the three-way comparison on numbers; floats use the same
// total order as the row path (nanCmp).
func cmpNum[T number](mem memory.Allocator, op string, l []T, r arrow.Array, c any, valid *memory.Buffer, nulls int) (arrow.Array, error) {
	var rv []T
	var cv T
	if r != nil {
		rv = numValues[T](r)
	} else {
		cv = toNum[T](c)
	}
	get := func(i int) T {
		if rv != nil {
			return rv[i]
		}
		return cv
	}
	numCmp := numCmp[T]
	if rv != nil {
		numCmp = numCmpArrays[T] // two arrays: -0.0 before 0.0
	}
	var f func(i int) bool
	switch op {
	case "=":
		f = func(i int) bool { return numCmp(l[i], get(i)) == 0 }
	case "<>":
		f = func(i int) bool { return numCmp(l[i], get(i)) != 0 }
	case "<":
		f = func(i int) bool { return numCmp(l[i], get(i)) < 0 }
	case "<=":
		f = func(i int) bool { return numCmp(l[i], get(i)) <= 0 }
	case ">":
		f = func(i int) bool { return numCmp(l[i], get(i)) > 0 }
	default:
		f = func(i int) bool { return numCmp(l[i], get(i)) >= 0 }
	}
	return newBoolArray(mem, len(l), valid, nulls, f), nil
}

func numCmp[T number](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	case x == y:
		return 0
	}
	return nanCmp(x != x, y != y, math.Signbit(float64(x)), math.Signbit(float64(y)))
}

// numCmpArrays is numCmp between two computed values, where LanceDB
// (Arrow's total order) puts -0.0 before 0.0; against a constant it finds
// them equal (numCmp).
func numCmpArrays[T number](x, y T) int {
	if x == y && x == 0 {
		return cmp.Compare(boolInt(!math.Signbit(float64(x))), boolInt(!math.Signbit(float64(y))))
	}
	return numCmp(x, y)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// nanCmp orders a NaN x or y as Arrow's total order does: a NaN with the
// sign bit set below every number, one without above, and NaNs of the
// same sign equal. (Zeros compare as IEEE 754 says: -0 = 0, which is what
// LanceDB gives against a literal.)
func nanCmp(xNaN, yNaN, xNeg, yNeg bool) int {
	switch {
	case xNaN && yNaN:
		switch {
		case xNeg == yNeg:
			return 0
		case xNeg:
			return -1
		}
		return 1
	case xNaN:
		if xNeg {
			return -1
		}
		return 1
	}
	if yNeg {
		return 1
	}
	return -1
}

// arithKernel computes l op r (or l op c, or c op l when swapped) with
// wrapping integer arithmetic, like the row path.
func arithKernel(mem memory.Allocator, op string, swapped bool, t arrow.DataType, l, r arrow.Array, c any) (arrow.Array, error) {
	switch t.ID() {
	case arrow.INT8:
		return arithNum[int8](mem, op, swapped, t, l, r, c)
	case arrow.INT16:
		return arithNum[int16](mem, op, swapped, t, l, r, c)
	case arrow.INT32:
		return arithNum[int32](mem, op, swapped, t, l, r, c)
	case arrow.INT64:
		return arithNum[int64](mem, op, swapped, t, l, r, c)
	case arrow.UINT8:
		return arithNum[uint8](mem, op, swapped, t, l, r, c)
	case arrow.UINT16:
		return arithNum[uint16](mem, op, swapped, t, l, r, c)
	case arrow.UINT32:
		return arithNum[uint32](mem, op, swapped, t, l, r, c)
	case arrow.UINT64:
		return arithNum[uint64](mem, op, swapped, t, l, r, c)
	case arrow.FLOAT32:
		return arithNum[float32](mem, op, swapped, t, l, r, c)
	case arrow.FLOAT64:
		return arithNum[float64](mem, op, swapped, t, l, r, c)
	}
	return nil, fmt.Errorf("%w: no arithmetic kernel for %s", ErrUnsupported, t)
}

func arithNum[T number](mem memory.Allocator, op string, swapped bool, t arrow.DataType, l, r arrow.Array, c any) (arrow.Array, error) {
	n := l.Len()
	valid, nulls := validity(mem, n, l, r)
	out := memory.NewResizableBuffer(mem)
	out.Resize(n * t.(arrow.FixedWidthDataType).BitWidth() / 8)
	dst := arrow.GetData[T](out.Bytes())[:n]
	lv := numValues[T](l)
	if op == "/" || op == "%" {
		if err := divNum(op, swapped, isFloat(t), isUnsigned(t), dst, lv, r, c, valid); err != nil {
			out.Release()
			if valid != nil {
				valid.Release()
			}
			return nil, err
		}
	} else if r != nil {
		rv := numValues[T](r)
		switch op {
		case "+":
			for i := range dst {
				dst[i] = lv[i] + rv[i]
			}
		case "-":
			for i := range dst {
				dst[i] = lv[i] - rv[i]
			}
		default:
			for i := range dst {
				dst[i] = lv[i] * rv[i]
			}
		}
	} else {
		cv := toNum[T](c)
		switch {
		case op == "+":
			for i := range dst {
				dst[i] = lv[i] + cv
			}
		case op == "-" && swapped:
			for i := range dst {
				dst[i] = cv - lv[i]
			}
		case op == "-":
			for i := range dst {
				dst[i] = lv[i] - cv
			}
		default:
			for i := range dst {
				dst[i] = lv[i] * cv
			}
		}
	}
	data := array.NewData(t, n, []*memory.Buffer{valid, out}, nil, nulls, 0)
	defer data.Release()
	if valid != nil {
		valid.Release()
	}
	out.Release()
	return array.MakeFromData(data), nil
}
