package sqlexpr

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// unifyAll brings args to their common type (DataFusion coercion; no
// literal rule for function arguments).
func unifyAll(name string, at int, args []*node) ([]*node, arrow.DataType, error) {
	t := arrow.DataType(tNull)
	for _, a := range args {
		var ok bool
		if t, ok = commonType(t, a.typ); !ok {
			return nil, nil, errAt(ErrType, at, "%s() arguments mix %s and %s", name, t, a.typ)
		}
	}
	out := make([]*node, len(args))
	for i, a := range args {
		c, err := coerceTo(a, t)
		if err != nil {
			return nil, nil, err
		}
		out[i] = c
	}
	return out, t, nil
}

func otherFuncs() map[string]funcSpec {
	return map[string]funcSpec{
		"coalesce":   coalesceFunc,
		"nvl":        twoArgCoalesce("nvl"),
		"ifnull":     twoArgCoalesce("ifnull"),
		"nullif":     nullifFunc,
		"greatest":   extremum("greatest", 1),
		"least":      extremum("least", -1),
		"arrow_cast": arrowCastFunc,
		"array_length": func(at int, args []*node) (*node, error) {
			if err := arity("array_length", at, args, 1, 2); err != nil {
				return nil, err
			}
			if !isList(args[0].typ) {
				return nil, errAt(ErrType, at, "array_length() needs a list, got %s", args[0].typ)
			}
			list := args[0]
			if len(args) == 2 {
				dim, err := coerceTo(args[1], tInt64)
				if err != nil || !isInteger(args[1].typ) {
					return nil, errAt(ErrType, at, "array_length() dimension must be an integer")
				}
				// Lists here have one level: dimension 1 is the length,
				// any other dimension is NULL.
				n := call("array_length", tUint64, func(a []any) (any, error) {
					if a[1].(int64) != 1 {
						return nil, nil
					}
					return uint64(len(a[0].([]any))), nil
				}, list, dim)
				n.nullable = true
				return n, nil
			}
			n := call("array_length", tUint64, func(a []any) (any, error) { return uint64(len(a[0].([]any))), nil }, list)
			n.nullable = true
			return n, nil
		},
		"get_field":     getFieldFunc,
		"make_array":    makeArrayFunc,
		"named_struct":  namedStructFunc,
		"date_part":     datePartFunc,
		"array_has_any": arrayHasSetFunc("array_has_any", false),
		"array_has_all": arrayHasSetFunc("array_has_all", true),
		"date_trunc":    dateTruncFunc,
	}
}

func coalesceFunc(at int, args []*node) (*node, error) {
	if err := arity("coalesce", at, args, 1, -1); err != nil {
		return nil, err
	}
	out, t, err := unifyAll("coalesce", at, args)
	if err != nil {
		return nil, err
	}
	// Like DataFusion's simplifier, drop the arguments after the first
	// one that cannot be NULL; coalesce(id, 1) over a NOT NULL id is just
	// id, which LanceDB then treats as an identity column.
	for i, a := range out {
		if !a.nullable {
			out = out[:i+1]
			break
		}
	}
	if len(out) == 1 {
		return out[0], nil
	}
	n := &node{kind: kCall, typ: t, op: "coalesce", args: out, nullable: true, fn: func(a []any) (any, error) {
		for _, v := range a {
			if v != nil {
				return v, nil
			}
		}
		return nil, nil
	}}
	for _, a := range out {
		if !a.nullable {
			n.nullable = false
		}
	}
	return n, nil
}

func nullifFunc(at int, args []*node) (*node, error) {
	if err := arity("nullif", at, args, 2, 2); err != nil {
		return nil, err
	}
	out, t, err := unifyAll("nullif", at, args)
	if err != nil {
		return nil, err
	}
	return &node{kind: kCall, typ: t, op: "nullif", args: out, nullable: true, fn: func(a []any) (any, error) {
		if a[0] != nil && a[1] != nil && compareValues(a[0], a[1]) == 0 {
			return nil, nil
		}
		return a[0], nil
	}}, nil
}

// extremum is greatest (sign 1) or least (sign -1): NULLs are skipped.
func extremum(name string, sign int) funcSpec {
	return func(at int, args []*node) (*node, error) {
		if err := arity(name, at, args, 1, -1); err != nil {
			return nil, err
		}
		out, t, err := unifyAll(name, at, args)
		if err != nil {
			return nil, err
		}
		if !comparable(t) {
			return nil, errAt(ErrType, at, "%s() cannot order %s", name, t)
		}
		return &node{kind: kCall, typ: t, op: name, args: out, nullable: true, fn: func(a []any) (any, error) {
			var best any
			for _, v := range a {
				if v != nil && (best == nil || compareValues(v, best)*sign > 0) {
					best = v
				}
			}
			return best, nil
		}}, nil
	}
}

func constString(name string, at int, n *node) (string, error) {
	if n.kind != kLit || n.val == nil || !isString(n.typ) {
		return "", errAt(ErrType, at, "%s() needs a constant string here", name)
	}
	return n.val.(string), nil
}

func arrowCastFunc(at int, args []*node) (*node, error) {
	if err := arity("arrow_cast", at, args, 2, 2); err != nil {
		return nil, err
	}
	name, err := constString("arrow_cast", at, args[1])
	if err != nil {
		return nil, err
	}
	t, ok := arrowTypeName(name)
	if !ok {
		return nil, errAt(ErrUnsupported, at, "arrow_cast() to %q is not supported", name)
	}
	return castNode(args[0], t, at)
}

func arrayHasFunc(at int, args []*node) (*node, error) {
	if err := arity("array_has", at, args, 2, 2); err != nil {
		return nil, err
	}
	if !isList(args[0].typ) {
		return nil, errAt(ErrType, at, "array_has() needs a list, got %s", args[0].typ)
	}
	elem := args[0].typ.(arrow.ListLikeType).Elem()
	needle, err := coerceTo(args[1], elem)
	if err != nil {
		return nil, errAt(ErrType, at, "array_has(): %v", err)
	}
	n := call("array_has", tBool, func(a []any) (any, error) {
		for _, v := range a[0].([]any) {
			if v != nil && compareValues(v, a[1]) == 0 {
				return true, nil
			}
		}
		return false, nil
	}, args[0], needle)
	n.nullable = true
	return n, nil
}

// arrayHasSetFunc builds array_has_any (all=false) and array_has_all:
// whether a list holds any (all) of the elements of another. Elements are
// compared as values, NULL equal to NULL, as DataFusion does; an empty
// second list gives false (any) or true (all) even for a NULL first one.
func arrayHasSetFunc(name string, all bool) funcSpec {
	return func(at int, args []*node) (*node, error) {
		if err := arity(name, at, args, 2, 2); err != nil {
			return nil, err
		}
		for _, a := range args {
			if !isList(a.typ) {
				return nil, errAt(ErrType, at, "%s() needs two lists, got %s", name, a.typ)
			}
		}
		hay, needles := args[0].typ.(arrow.ListLikeType).Elem(), args[1].typ.(arrow.ListLikeType).Elem()
		if !arrow.TypeEqual(hay, needles) && !isNull(needles) {
			if _, ok := commonType(hay, needles); !ok || !(isNumeric(hay) && isNumeric(needles) || isString(hay) && isString(needles)) {
				return nil, errAt(ErrType, at, "%s(): cannot look for %s elements in a list of %s", name, needles, hay)
			}
		}
		n := &node{kind: kCall, typ: tBool, op: name, args: args, nullable: true}
		n.fn = func(a []any) (any, error) {
			if a[1] == nil {
				return nil, nil
			}
			want := a[1].([]any)
			if len(want) == 0 {
				return all, nil
			}
			if a[0] == nil {
				return nil, nil
			}
			have := a[0].([]any)
			for _, w := range want {
				found := false
				for _, h := range have {
					if h == nil && w == nil || h != nil && w != nil && compareListElems(h, w) == 0 {
						found = true
						break
					}
				}
				if found != all {
					return found, nil
				}
			}
			return all, nil
		}
		return n, nil
	}
}

// compareListElems compares two list elements that may differ in Go type
// (int64 and uint64 from lists of different integer types).
func compareListElems(a, b any) int {
	switch x := a.(type) {
	case int64:
		if y, ok := b.(uint64); ok {
			return compareMixed(x, y)
		}
		if y, ok := b.(float64); ok {
			return compareFloat(float64(x), y)
		}
	case uint64:
		if y, ok := b.(int64); ok {
			return compareMixed(x, y)
		}
		if y, ok := b.(float64); ok {
			return compareFloat(float64(x), y)
		}
	case float64:
		switch y := b.(type) {
		case int64:
			return compareFloat(x, float64(y))
		case uint64:
			return compareFloat(x, float64(y))
		}
	}
	return compareValues(a, b)
}

func makeArrayFunc(at int, args []*node) (*node, error) {
	out, t, err := unifyAll("make_array", at, args)
	if err != nil {
		return nil, err
	}
	return &node{kind: kCall, typ: arrow.ListOf(t), op: "make_array", args: out, nullable: true, fn: func(a []any) (any, error) {
		return append([]any(nil), a...), nil
	}}, nil
}

func namedStructFunc(at int, args []*node) (*node, error) {
	if len(args) == 0 || len(args)%2 != 0 {
		return nil, errAt(ErrType, at, "named_struct() takes name, value pairs")
	}
	var fields []arrow.Field
	var vals []*node
	for i := 0; i < len(args); i += 2 {
		name, err := constString("named_struct", at, args[i])
		if err != nil {
			return nil, err
		}
		fields = append(fields, arrow.Field{Name: name, Type: args[i+1].typ, Nullable: true})
		vals = append(vals, args[i+1])
	}
	return &node{kind: kCall, typ: arrow.StructOf(fields...), op: "named_struct", args: vals, nullable: true, fn: func(a []any) (any, error) {
		return structVal(append([]any(nil), a...)), nil
	}}, nil
}

// temporalArg checks that n is a date or timestamp (strings are parsed as
// timestamps) and returns it with a function turning a row value into a
// UTC time.
func temporalArg(name string, at int, n *node) (*node, func(any) time.Time, error) {
	if isString(n.typ) {
		var err error
		if n, err = coerceTo(n, &arrow.TimestampType{Unit: arrow.Nanosecond}); err != nil {
			return nil, nil, errAt(ErrType, at, "%s(): %v", name, err)
		}
	}
	switch t := n.typ.(type) {
	case *arrow.Date32Type:
		return n, func(v any) time.Time { return time.Unix(v.(int64)*86400, 0).UTC() }, nil
	case *arrow.TimestampType:
		loc, err := zoneOf(t)
		if err != nil {
			return nil, nil, withPos(err, at)
		}
		if loc == nil {
			loc = time.UTC
		}
		unit := t.Unit
		// Local time in the column's zone, as DataFusion reads it.
		return n, func(v any) time.Time { return wallTime(v.(int64), unit).In(loc) }, nil
	}
	return nil, nil, errAt(ErrType, at, "%s() needs a date or timestamp, got %s", name, n.typ)
}

func datePartFunc(at int, args []*node) (*node, error) {
	if err := arity("date_part", at, args, 2, 2); err != nil {
		return nil, err
	}
	part, err := constString("date_part", at, args[0])
	if err != nil {
		return nil, err
	}
	x, toTime, err := temporalArg("date_part", at, args[1])
	if err != nil {
		return nil, err
	}
	part = strings.ToLower(part)
	ret := tInt32
	var f func(time.Time) any
	switch part {
	case "year", "years":
		f = func(t time.Time) any { return int64(t.Year()) }
	case "quarter":
		f = func(t time.Time) any { return int64((int(t.Month())-1)/3 + 1) }
	case "month", "months":
		f = func(t time.Time) any { return int64(t.Month()) }
	case "week", "weeks":
		f = func(t time.Time) any { _, w := t.ISOWeek(); return int64(w) }
	case "day", "days":
		f = func(t time.Time) any { return int64(t.Day()) }
	case "dow":
		f = func(t time.Time) any { return int64(t.Weekday()) }
	case "isodow":
		f = func(t time.Time) any { return int64((t.Weekday()+6)%7) + 1 } // Monday 1 … Sunday 7
	case "doy":
		f = func(t time.Time) any { return int64(t.YearDay()) }
	case "hour", "hours":
		f = func(t time.Time) any { return int64(t.Hour()) }
	case "minute", "minutes":
		f = func(t time.Time) any { return int64(t.Minute()) }
	case "second", "seconds":
		f = func(t time.Time) any { return int64(t.Second()) }
	case "millisecond", "milliseconds":
		f = func(t time.Time) any { return int64(t.Second()*1000 + t.Nanosecond()/1e6) }
	case "microsecond", "microseconds":
		f = func(t time.Time) any { return int64(t.Second()*1e6 + t.Nanosecond()/1e3) }
	case "epoch":
		// Seconds as the raw tick count divided by ticks per second, the
		// way DataFusion computes it (rounding included).
		mul, div := float64(86400), float64(1)
		if ts, ok := x.typ.(*arrow.TimestampType); ok {
			mul, div = 1, float64(unitsPerSecond(ts.Unit))
		}
		n := call("date_part", tFloat64, func(a []any) (any, error) {
			return float64(a[1].(int64)) * mul / div, nil
		}, args[0], x)
		n.nullable = true
		return n, nil
	default:
		return nil, errAt(ErrUnsupported, at, "date_part() does not know the part %q", part)
	}
	n := call("date_part", ret, func(a []any) (any, error) { return f(toTime(a[1])), nil }, args[0], x)
	n.nullable = true
	return n, nil
}

func dateTruncFunc(at int, args []*node) (*node, error) {
	if err := arity("date_trunc", at, args, 2, 2); err != nil {
		return nil, err
	}
	part, err := constString("date_trunc", at, args[0])
	if err != nil {
		return nil, err
	}
	x := args[1]
	if !isTemporal(x.typ) && !isString(x.typ) {
		return nil, errAt(ErrType, at, "date_trunc() needs a timestamp, got %s", x.typ)
	}
	ret, ok := x.typ.(*arrow.TimestampType)
	if !ok {
		ret = &arrow.TimestampType{Unit: arrow.Nanosecond}
		if x, err = coerceTo(x, ret); err != nil {
			return nil, err
		}
	}
	per := unitsPerSecond(ret.Unit)
	part = strings.ToLower(part)
	var trunc func(time.Time) time.Time
	switch part {
	case "year":
		trunc = func(t time.Time) time.Time { return time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC) }
	case "quarter":
		trunc = func(t time.Time) time.Time {
			return time.Date(t.Year(), time.Month((int(t.Month())-1)/3*3+1), 1, 0, 0, 0, 0, time.UTC)
		}
	case "month":
		trunc = func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC) }
	case "week":
		trunc = func(t time.Time) time.Time {
			d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
			return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
		}
	case "day":
		trunc = func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC) }
	case "hour":
		trunc = func(t time.Time) time.Time { return t.Truncate(time.Hour) }
	case "minute":
		trunc = func(t time.Time) time.Time { return t.Truncate(time.Minute) }
	case "second":
		trunc = func(t time.Time) time.Time { return t.Truncate(time.Second) }
	case "millisecond":
		trunc = func(t time.Time) time.Time { return t.Truncate(time.Millisecond) }
	case "microsecond":
		trunc = func(t time.Time) time.Time { return t.Truncate(time.Microsecond) }
	default:
		return nil, errAt(ErrUnsupported, at, "date_trunc() does not know the part %q", part)
	}
	loc, err := zoneOf(ret)
	if err != nil {
		return nil, withPos(err, at)
	}
	n := call("date_trunc", ret, func(a []any) (any, error) {
		v := a[1].(int64)
		sec := floorDiv(v, per)
		t := time.Unix(sec, (v-sec*per)*(1e9/per)).UTC()
		if loc == nil {
			t = trunc(t)
			return convertUnit(t.UnixNano(), arrow.Nanosecond, ret.Unit), nil
		}
		return ticks(truncLocal(t, loc, trunc), ret.Unit), nil
	}, args[0], x)
	n.nullable = true
	if n.typ == nil {
		return nil, fmt.Errorf("%w: date_trunc", ErrType)
	}
	return n, nil
}

// twoArgCoalesce is nvl/ifnull: coalesce limited to two arguments.
func twoArgCoalesce(name string) funcSpec {
	return func(at int, args []*node) (*node, error) {
		if err := arity(name, at, args, 2, 2); err != nil {
			return nil, err
		}
		return coalesceFunc(at, args)
	}
}

// getFieldFunc is get_field(struct, 'name'), also written x.name.
func getFieldFunc(at int, args []*node) (*node, error) {
	if err := arity("get_field", at, args, 2, 2); err != nil {
		return nil, err
	}
	st, ok := args[0].typ.(*arrow.StructType)
	if !ok {
		return nil, errAt(ErrType, at, "get_field() needs a struct, got %s", args[0].typ)
	}
	name, err := constString("get_field", at, args[1])
	if err != nil {
		return nil, err
	}
	k, ok := st.FieldIdx(name)
	if !ok {
		return nil, errAt(ErrUnknownColumn, at, "struct has no field '%s'", name)
	}
	n := call("get_field", st.Field(k).Type, func(a []any) (any, error) { return a[0].(structVal)[k], nil }, args[0], args[1])
	n.nullable = true
	return n, nil
}
