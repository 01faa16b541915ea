package sqlexpr

import (
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// timeFuncs are DataFusion's timestamp constructors and conversions that
// LanceDB 0.39 accepts.
func timeFuncs() map[string]funcSpec {
	return map[string]funcSpec{
		"to_timestamp":         toTimestamp("to_timestamp", arrow.Nanosecond, arrow.Second),
		"to_timestamp_seconds": toTimestamp("to_timestamp_seconds", arrow.Second, arrow.Second),
		"to_timestamp_millis":  toTimestamp("to_timestamp_millis", arrow.Millisecond, arrow.Millisecond),
		"to_timestamp_micros":  toTimestamp("to_timestamp_micros", arrow.Microsecond, arrow.Microsecond),
		"to_timestamp_nanos":   toTimestamp("to_timestamp_nanos", arrow.Nanosecond, arrow.Nanosecond),
		"from_unixtime": func(at int, args []*node) (*node, error) {
			if err := arity("from_unixtime", at, args, 1, 1); err != nil {
				return nil, err
			}
			return fixedCall("from_unixtime", at, args, []arrow.DataType{tInt64}, &arrow.TimestampType{Unit: arrow.Second}, func(a []any) (any, error) {
				return a[0], nil
			})
		},
		"to_date": func(at int, args []*node) (*node, error) {
			if err := arity("to_date", at, args, 1, 1); err != nil {
				return nil, err
			}
			x := args[0]
			if !isString(x.typ) && !isNull(x.typ) {
				return nil, errAt(ErrType, at, "to_date() needs a string, got %s", x.typ)
			}
			return fixedCall("to_date", at, args, []arrow.DataType{tUtf8}, tDate32, func(a []any) (any, error) {
				return castValue(a[0], tUtf8, tDate32)
			})
		},
		"make_date": strN("make_date", []arrow.DataType{tInt64, tInt64, tInt64}, tDate32, func(a []any) (any, error) {
			y, m, d := a[0].(int64), a[1].(int64), a[2].(int64)
			if m < 1 || m > 12 || d < 1 || d > 31 {
				return nil, fmt.Errorf("%w: make_date(%d, %d, %d) is not a date", ErrEval, y, m, d)
			}
			t := time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, time.UTC)
			if t.Day() != int(d) {
				return nil, fmt.Errorf("%w: make_date(%d, %d, %d) is not a date", ErrEval, y, m, d)
			}
			return floorDiv(t.Unix(), 86400), nil
		}),
		"to_unixtime": func(at int, args []*node) (*node, error) {
			if err := arity("to_unixtime", at, args, 1, 1); err != nil {
				return nil, err
			}
			x := args[0]
			var err error
			if isString(x.typ) {
				if x, err = coerceTo(x, &arrow.TimestampType{Unit: arrow.Nanosecond}); err != nil {
					return nil, err
				}
			}
			var per int64
			switch t := x.typ.(type) {
			case *arrow.TimestampType:
				per = unitsPerSecond(t.Unit)
			case *arrow.Date32Type:
				per = 0
			default:
				if !isInteger(x.typ) {
					return nil, errAt(ErrType, at, "to_unixtime() needs a timestamp, got %s", x.typ)
				}
				per = 1
			}
			n := call("to_unixtime", tInt64, func(a []any) (any, error) {
				v := a[0].(int64)
				if per == 0 {
					return v * 86400, nil
				}
				return floorDiv(v, per), nil
			}, x)
			n.nullable = true
			return n, nil
		},
	}
}

// toTimestamp builds to_timestamp and its unit variants: strings are
// parsed, numbers count intUnit ticks, timestamps change unit.
func toTimestamp(name string, unit, intUnit arrow.TimeUnit) funcSpec {
	return func(at int, args []*node) (*node, error) {
		if err := arity(name, at, args, 1, 1); err != nil {
			return nil, err
		}
		x := args[0]
		ret := &arrow.TimestampType{Unit: unit}
		var from arrow.DataType = x.typ
		switch {
		case isString(x.typ), isNull(x.typ):
			return fixedCall(name, at, args, []arrow.DataType{tUtf8}, ret, func(a []any) (any, error) {
				return castValue(a[0], tUtf8, ret)
			})
		case isInteger(x.typ):
			per := unitsPerSecond(unit) / unitsPerSecond(intUnit)
			return fixedCall(name, at, args, []arrow.DataType{tInt64}, ret, func(a []any) (any, error) {
				return a[0].(int64) * per, nil
			})
		case x.typ.ID() == arrow.TIMESTAMP, x.typ.ID() == arrow.DATE32:
			cast, err := caster(from, ret)
			if err != nil {
				return nil, withPos(err, at)
			}
			n := call(name, ret, func(a []any) (any, error) { return cast(a[0]) }, x)
			n.nullable = true
			return n, nil
		}
		return nil, errAt(ErrType, at, "%s() needs a string, integer or timestamp, got %s", name, x.typ)
	}
}
