package sqlexpr

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
)

// extraFuncs are further DataFusion scalar functions LanceDB 0.39 accepts
// (each checked by the differential tests).
func extraFuncs() map[string]funcSpec {
	return map[string]funcSpec{
		"log":     logFunc,
		"degrees": math1("degrees", func(x float64) float64 { return x * (180 / math.Pi) }),
		"radians": math1("radians", func(x float64) float64 { return x * (math.Pi / 180) }),
		"isnan": func(at int, args []*node) (*node, error) {
			if err := arity("isnan", at, args, 1, 1); err != nil {
				return nil, err
			}
			t := floatOf(args[0])
			return fixedCall("isnan", at, args, []arrow.DataType{t}, tBool, func(a []any) (any, error) {
				return math.IsNaN(a[0].(float64)), nil
			})
		},
		"nanvl": func(at int, args []*node) (*node, error) {
			if err := arity("nanvl", at, args, 2, 2); err != nil {
				return nil, err
			}
			t := tFloat64
			if args[0].typ.ID() == arrow.FLOAT32 && args[1].typ.ID() == arrow.FLOAT32 {
				t = tFloat32
			}
			return fixedCall("nanvl", at, args, []arrow.DataType{t, t}, t, func(a []any) (any, error) {
				if math.IsNaN(a[0].(float64)) {
					return a[1], nil
				}
				return a[0], nil
			})
		},
		"chr": strN("chr", []arrow.DataType{tInt64}, tUtf8, func(a []any) (any, error) {
			c := a[0].(int64)
			if c == 0 {
				return nil, fmt.Errorf("%w: chr() of zero", ErrEval)
			}
			if c < 0 || c > utf8.MaxRune || !utf8.ValidRune(rune(c)) {
				return nil, fmt.Errorf("%w: chr() of invalid code point %d", ErrEval, c)
			}
			return string(rune(c)), nil
		}),
		"bit_length": strN("bit_length", []arrow.DataType{tUtf8}, tInt32, func(a []any) (any, error) {
			return int64(len(a[0].(string)) * 8), nil
		}),
		"contains": strN("contains", types(tUtf8, tUtf8), tBool, func(a []any) (any, error) {
			return strings.Contains(a[0].(string), a[1].(string)), nil
		}),
		"substr_index": strN("substr_index", []arrow.DataType{tUtf8, tUtf8, tInt64}, tUtf8, func(a []any) (any, error) {
			s, delim, n := a[0].(string), a[1].(string), a[2].(int64)
			if delim == "" || n == 0 {
				return "", nil
			}
			parts := strings.Split(s, delim)
			if n > 0 {
				if n >= int64(len(parts)) {
					return s, nil
				}
				return strings.Join(parts[:n], delim), nil
			}
			if -n >= int64(len(parts)) {
				return s, nil
			}
			return strings.Join(parts[int64(len(parts))+n:], delim), nil
		}),
		"cardinality": func(at int, args []*node) (*node, error) {
			if err := arity("cardinality", at, args, 1, 1); err != nil {
				return nil, err
			}
			if !isList(args[0].typ) {
				return nil, errAt(ErrType, at, "cardinality() needs a list, got %s", args[0].typ)
			}
			n := call("cardinality", tUint64, func(a []any) (any, error) { return uint64(len(a[0].([]any))), nil }, args[0])
			n.nullable = true
			return n, nil
		},
		"array_element":  arrayElementFunc,
		"list_element":   arrayElementFunc,
		"array_has":      arrayHasFunc,
		"list_has":       arrayHasFunc,
		"array_contains": arrayHasFunc,
	}
}

// logFunc is log(x) (base 10) or log(base, x).
func logFunc(at int, args []*node) (*node, error) {
	if err := arity("log", at, args, 1, 2); err != nil {
		return nil, err
	}
	if len(args) == 1 {
		return math1("log", math.Log10)(at, args)
	}
	t := tFloat64
	if args[0].typ.ID() == arrow.FLOAT32 && args[1].typ.ID() == arrow.FLOAT32 {
		t = tFloat32
	}
	return fixedCall("log", at, args, []arrow.DataType{t, t}, t, func(a []any) (any, error) {
		r := math.Log(a[1].(float64)) / math.Log(a[0].(float64))
		if t.ID() == arrow.FLOAT32 {
			r = float64(float32(r))
		}
		return r, nil
	})
}

// arrayElementFunc is array_element(list, i), the same as list[i].
func arrayElementFunc(at int, args []*node) (*node, error) {
	if err := arity("array_element", at, args, 2, 2); err != nil {
		return nil, err
	}
	return indexNode(args[0], args[1], at, at)
}
