package sqlexpr

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// floatOf is the type a float math function returns: Float32 stays,
// everything else is computed in Float64.
func floatOf(a *node) arrow.DataType {
	if a.typ.ID() == arrow.FLOAT32 {
		return tFloat32
	}
	return tFloat64
}

// math1 is a one-argument float function.
func math1(name string, f func(float64) float64) funcSpec {
	return func(at int, args []*node) (*node, error) {
		if err := arity(name, at, args, 1, 1); err != nil {
			return nil, err
		}
		if !isNumeric(args[0].typ) && !isNull(args[0].typ) {
			return nil, errAt(ErrType, at, "%s() needs a number, got %s", name, args[0].typ)
		}
		t := floatOf(args[0])
		return fixedCall(name, at, args, []arrow.DataType{t}, t, func(a []any) (any, error) {
			x := a[0].(float64)
			if x != x {
				return x, nil // NaN passes through with its sign, as in Rust
			}
			r := f(x)
			if t.ID() == arrow.FLOAT32 {
				r = float64(float32(r))
			}
			return r, nil
		})
	}
}

// trig gives the hardware's default NaN for an infinite argument, as
// Rust's cos/sin/tan do (Go's return a positive NaN).
func trig(f func(float64) float64) func(float64) float64 {
	return func(x float64) float64 {
		if math.IsInf(x, 0) {
			return negNaN
		}
		return f(x)
	}
}

// mathDigits is round/trunc with an optional number of decimals.
func mathDigits(name string, f func(float64) float64) funcSpec {
	return func(at int, args []*node) (*node, error) {
		if err := arity(name, at, args, 1, 2); err != nil {
			return nil, err
		}
		if !isNumeric(args[0].typ) && !isNull(args[0].typ) {
			return nil, errAt(ErrType, at, "%s() needs a number, got %s", name, args[0].typ)
		}
		t := floatOf(args[0])
		types := []arrow.DataType{t, tInt64}[:len(args)]
		return fixedCall(name, at, args, types, t, func(a []any) (any, error) {
			x := a[0].(float64)
			var r float64
			if len(a) > 1 {
				p := math.Pow(10, float64(a[1].(int64)))
				r = f(x*p) / p
			} else {
				r = f(x)
			}
			if t.ID() == arrow.FLOAT32 {
				r = float64(float32(r))
			}
			return r, nil
		})
	}
}

func mathFuncs() map[string]funcSpec {
	return map[string]funcSpec{
		"abs": func(at int, args []*node) (*node, error) {
			if err := arity("abs", at, args, 1, 1); err != nil {
				return nil, err
			}
			t := args[0].typ
			if isNull(t) {
				return litNode(nil, tFloat64), nil
			}
			if !isNumeric(t) {
				return nil, errAt(ErrType, at, "abs() needs a number, got %s", t)
			}
			n := call("abs", t, func(a []any) (any, error) {
				switch v := a[0].(type) {
				case int64:
					if v < 0 {
						return wrapInt(-v, t.ID()), nil
					}
					return v, nil
				case float64:
					return math.Abs(v), nil
				}
				return a[0], nil
			}, args[0])
			n.nullable = true
			return n, nil
		},
		"round":  mathDigits("round", math.Round),
		"trunc":  mathDigits("trunc", math.Trunc),
		"sqrt":   math1("sqrt", math.Sqrt),
		"cbrt":   math1("cbrt", math.Cbrt),
		"ln":     math1("ln", math.Log),
		"log10":  math1("log10", math.Log10),
		"log2":   math1("log2", math.Log2),
		"exp":    math1("exp", math.Exp),
		"cos":    math1("cos", trig(math.Cos)),
		"sin":    math1("sin", trig(math.Sin)),
		"tan":    math1("tan", trig(math.Tan)),
		"acos":   math1("acos", math.Acos),
		"asin":   math1("asin", math.Asin),
		"atan":   math1("atan", math.Atan),
		"ceil":   math1("ceil", math.Ceil),
		"floor":  math1("floor", math.Floor),
		"signum": math1("signum", signum),
		"pi": func(at int, args []*node) (*node, error) {
			if err := arity("pi", at, args, 0, 0); err != nil {
				return nil, err
			}
			return litNode(math.Pi, tFloat64), nil
		},
		"power":  powerFunc,
		"pow":    powerFunc,
		"iszero": isZeroFunc,
	}
}

// isZeroFunc is iszero(x): whether a number is zero (-0.0 included).
func isZeroFunc(at int, args []*node) (*node, error) {
	if err := arity("iszero", at, args, 1, 1); err != nil {
		return nil, err
	}
	x := args[0]
	if !isNumeric(x.typ) && !isNull(x.typ) {
		return nil, errAt(ErrType, at, "iszero() needs a number, got %s", x.typ)
	}
	n := call("iszero", tBool, func(a []any) (any, error) {
		switch v := a[0].(type) {
		case int64:
			return v == 0, nil
		case uint64:
			return v == 0, nil
		case float64:
			return v == 0, nil
		}
		return nil, nil
	}, x)
	n.nullable = true
	return n, nil
}

func signum(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x // keeps 0, -0 and NaN
}

// powerFunc computes in Float64 whatever the argument types, as
// LanceDB 0.39 does.
func powerFunc(at int, args []*node) (*node, error) {
	if err := arity("power", at, args, 2, 2); err != nil {
		return nil, err
	}
	for _, a := range args {
		if !isNumeric(a.typ) && !isNull(a.typ) {
			return nil, errAt(ErrType, at, "power() needs numbers, got %s", a.typ)
		}
	}
	return fixedCall("power", at, args, []arrow.DataType{tFloat64, tFloat64}, tFloat64, func(a []any) (any, error) {
		return math.Pow(a[0].(float64), a[1].(float64)), nil
	})
}
