package sqlexpr

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// negate is unary minus; integers wrap at their width like DataFusion.
func negate(v any, t arrow.DataType) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case int64:
		return wrapInt(-x, t.ID()), nil
	case float64:
		return -x, nil
	case uint64:
		return nil, fmt.Errorf("%w: cannot negate unsigned %s", ErrType, t)
	}
	return nil, fmt.Errorf("%w: cannot negate %s", ErrType, t)
}

// kleeneAnd is SQL AND: FALSE wins over NULL.
func kleeneAnd(a []any) (any, error) {
	if a[0] == false || a[1] == false {
		return false, nil
	}
	if a[0] == nil || a[1] == nil {
		return nil, nil
	}
	return true, nil
}

// kleeneOr is SQL OR: TRUE wins over NULL.
func kleeneOr(a []any) (any, error) {
	if a[0] == true || a[1] == true {
		return true, nil
	}
	if a[0] == nil || a[1] == nil {
		return nil, nil
	}
	return false, nil
}

// cmpOp turns a three-way comparison into the operator's answer.
func cmpOp(op string, c int) bool {
	switch op {
	case "=":
		return c == 0
	case "<>":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

// compareValues orders two non-NULL values of the same type. Floats use
// a total order as Arrow does (see nanCmp).
func compareValues(a, b any) int {
	switch x := a.(type) {
	case int64:
		y := b.(int64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case uint64:
		y := b.(uint64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case float64:
		return compareFloat(x, b.(float64))
	case string:
		return strings.Compare(x, b.(string))
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case []byte:
		return bytes.Compare(x, b.([]byte))
	case []any:
		return compareLists(x, b.([]any))
	}
	return 0
}

// compareLists orders lists as Arrow's comparator does: element by
// element, a NULL element before any value and equal to another NULL,
// then by length.
func compareLists(x, y []any) int {
	for i := 0; i < len(x) && i < len(y); i++ {
		switch a, b := x[i], y[i]; {
		case a == nil && b == nil:
		case a == nil:
			return -1
		case b == nil:
			return 1
		default:
			if c := compareValues(a, b); c != 0 {
				return c
			}
		}
	}
	return cmp.Compare(len(x), len(y))
}

func compareFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	case x == y:
		return 0
	}
	return nanCmp(x != x, y != y, math.Signbit(x), math.Signbit(y))
}

// NaNs as Rust on x86-64 produces them: the hardware's default NaN has the
// sign bit set (0/0, sqrt(-1), fmod(x, 0), cos(inf)); f64::NAN, what
// 'NaN' parses to, has it clear. The sign decides how Arrow orders them.
var (
	negNaN = math.Float64frombits(0xfff8000000000000)
	posNaN = math.Float64frombits(0x7ff8000000000000)
)

// rustMod is Rust's f64 % (C fmod): NaN operands propagate, and an
// invalid operation gives the hardware's default NaN.
func rustMod(x, y float64) float64 {
	switch {
	case x != x:
		return x
	case y != y:
		return y
	}
	if r := math.Mod(x, y); r == r {
		return r
	}
	return negNaN
}

// errDivZero mirrors DataFusion's integer division by zero failure.
var errDivZero = fmt.Errorf("%w: divide by zero error", ErrEval)

// intArith applies + - * / % to two integers of one Go width; the caller
// wraps the result to the SQL type's width.
func intArith[T int64 | uint64](op string, x, y T) (T, error) {
	switch op {
	case "+":
		return x + y, nil
	case "-":
		return x - y, nil
	case "*":
		return x * y, nil
	case "/", "%":
		if y == 0 {
			return 0, errDivZero
		}
		if op == "/" {
			return x / y, nil
		}
		return x % y, nil
	}
	return 0, fmt.Errorf("%w: arithmetic operator %q", ErrUnsupported, op)
}

// arith applies + - * / % to two non-NULL values of numeric type t.
// Integers wrap at t's width and divide truncating toward zero; floats
// follow IEEE 754 (x/0 is ±inf or NaN).
func arith(op string, a, b any, t arrow.DataType) (any, error) {
	switch x := a.(type) {
	case int64:
		r, err := intArith(op, x, b.(int64))
		if err != nil {
			return nil, err
		}
		return wrapInt(r, t.ID()), nil
	case uint64:
		r, err := intArith(op, x, b.(uint64))
		if err != nil {
			return nil, err
		}
		return wrapUint(r, t.ID()), nil
	case float64:
		y := b.(float64)
		var r float64
		switch op {
		case "+":
			r = x + y
		case "-":
			r = x - y
		case "*":
			r = x * y
		case "/":
			r = x / y
		case "%":
			r = rustMod(x, y)
		}
		if t.ID() == arrow.FLOAT32 {
			r = float64(float32(r))
		}
		return r, nil
	}
	return nil, fmt.Errorf("%w: arithmetic on %T", ErrType, a)
}
