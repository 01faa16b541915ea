package sqlexpr

import (
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

func (ck *checker) unary(e *Unary) (*node, error) {
	x, err := ck.check(e.X)
	if err != nil {
		return nil, err
	}
	switch e.Op {
	case "NOT":
		x, err = asBool(x, e.At)
		if err != nil {
			return nil, err
		}
		return call("not", tBool, func(a []any) (any, error) { return !a[0].(bool), nil }, x), nil
	case "+":
		if !isNumeric(x.typ) && !isNull(x.typ) {
			return nil, errAt(ErrType, e.At, "unary + needs a number, got %s", x.typ)
		}
		return x, nil
	}
	if !isNumeric(x.typ) && !isNull(x.typ) {
		return nil, errAt(ErrType, e.At, "unary - needs a number, got %s", x.typ)
	}
	if u, ok := x.val.(uint64); ok && x.kind == kLit && x.isLitSrc {
		// A literal above Int64 negated is a Float64 in DataFusion
		// (-9223372036854775808 included).
		n := litNode(-float64(u), tFloat64)
		n.isLitSrc = true
		return n, nil
	}
	if x.kind == kLit {
		// Fold so that -5 stays a literal for Lance's coercion rule.
		v, err := negate(x.val, x.typ)
		if err != nil {
			return nil, errAt(ErrType, e.At, "%v", err)
		}
		n := litNode(v, x.typ)
		n.isLitSrc = x.isLitSrc
		return n, nil
	}
	t := x.typ
	return call("neg", t, func(a []any) (any, error) { return negate(a[0], t) }, x), nil
}

// asBool checks that n is boolean (a NULL literal becomes a boolean NULL).
func asBool(n *node, at int) (*node, error) {
	switch n.typ.ID() {
	case arrow.BOOL:
		return n, nil
	case arrow.NULL:
		return litNode(nil, tBool), nil
	}
	return nil, errAt(ErrType, at, "expected a boolean, got %s", n.typ)
}

func (ck *checker) binary(e *Binary) (*node, error) {
	rule := ck.rule
	inherit := rule && (e.Op == "AND" || e.Op == "OR")
	l, err := ck.checkRule(e.L, inherit)
	if err != nil {
		return nil, err
	}
	r, err := ck.checkRule(e.R, inherit)
	if err != nil {
		return nil, err
	}
	switch e.Op {
	case "AND", "OR":
		if l, err = asBool(l, e.L.Pos()); err != nil {
			return nil, err
		}
		if r, err = asBool(r, e.R.Pos()); err != nil {
			return nil, err
		}
		n := &node{kind: kCall, typ: tBool, op: strings.ToLower(e.Op), args: []*node{l, r}, nullable: l.nullable || r.nullable}
		if e.Op == "AND" {
			n.fn = kleeneAnd
		} else {
			n.fn = kleeneOr
		}
		return n, nil
	case "||":
		// Lance's literal rule applies to || too: `flag || 'x'` is refused.
		if rule && l.kind == kCol && r.kind == kLit && r.isLitSrc {
			if _, err := literalToColumn(r, l.typ, e.At); err != nil {
				return nil, err
			}
		}
		if rule && r.kind == kCol && l.kind == kLit && l.isLitSrc {
			if _, err := literalToColumn(l, r.typ, e.At); err != nil {
				return nil, err
			}
		}
		if !isString(l.typ) && !isString(r.typ) {
			return nil, errAt(ErrType, e.At, "cannot infer a string type for %s || %s", l.typ, r.typ)
		}
		// Non-strings are cast to Utf8; LargeUtf8 on either side wins.
		t := tUtf8
		if l.typ.ID() == arrow.LARGE_STRING || r.typ.ID() == arrow.LARGE_STRING {
			t = arrow.BinaryTypes.LargeString
		}
		if l, err = coerceTo(l, t); err != nil {
			return nil, err
		}
		if r, err = coerceTo(r, t); err != nil {
			return nil, err
		}
		return call("concat_op", t, func(a []any) (any, error) { return a[0].(string) + a[1].(string), nil }, l, r), nil
	case "=", "<>", "<", "<=", ">", ">=":
		if isWide(l.typ) || isWide(r.typ) {
			if !wideOperands(l, r, rule) {
				return nil, errAt(ErrType, e.At, "cannot compare %s with %s", l.typ, r.typ)
			}
			return wideCompare(e.Op, l, r), nil
		}
		if mixedSignedness(l, r, rule) {
			return mixedCompare(e.Op, l, r), nil
		}
		l, r, err = unify(l, r, e.At, rule)
		if err != nil {
			return nil, err
		}
		if !comparable(l.typ) {
			return nil, errAt(ErrType, e.At, "cannot compare values of type %s", l.typ)
		}
		op := e.Op
		if isFloat(l.typ) && l.kind != kLit && r.kind != kLit {
			// Two computed floats: -0.0 before 0.0 (numCmpArrays).
			return call(op, tBool, func(a []any) (any, error) {
				return cmpOp(op, numCmpArrays(a[0].(float64), a[1].(float64))), nil
			}, l, r), nil
		}
		return call(op, tBool, func(a []any) (any, error) { return cmpOp(op, compareValues(a[0], a[1])), nil }, l, r), nil
	case "IS DISTINCT FROM", "IS NOT DISTINCT FROM":
		l, r, err = unify(l, r, e.At, rule)
		if err != nil {
			return nil, err
		}
		distinct := e.Op == "IS DISTINCT FROM"
		n := &node{kind: kCall, typ: tBool, op: "distinct", args: []*node{l, r}}
		n.fn = func(a []any) (any, error) {
			var same bool
			switch {
			case a[0] == nil || a[1] == nil:
				same = a[0] == nil && a[1] == nil
			default:
				same = compareValues(a[0], a[1]) == 0
			}
			return same != distinct, nil
		}
		return n, nil
	case "+", "-", "*", "/", "%":
		if wideOperands(l, r, rule) {
			return wideArith(e.Op, l, r, e.At)
		}
		if n, ok := dateArith(e.Op, l, r, rule); ok {
			return n, nil
		}
		l, r, err = unify(l, r, e.At, rule)
		if err != nil {
			return nil, err
		}
		t := l.typ
		if isNull(t) {
			return litNode(nil, tNull), nil
		}
		if !isNumeric(t) {
			return nil, errAt(ErrType, e.At, "operator %s needs numbers, got %s", e.Op, t)
		}
		op := e.Op
		return call(op, t, func(a []any) (any, error) { return arith(op, a[0], a[1], t) }, l, r), nil
	}
	return nil, errAt(ErrUnsupported, e.At, "operator %s", e.Op)
}

// comparable reports whether values of t can be ordered.
func comparable(t arrow.DataType) bool {
	if lt, ok := t.(arrow.ListLikeType); ok && isList(t) {
		return comparable(lt.Elem()) // lexicographically (compareLists)
	}
	return isNumeric(t) || isString(t) || isTemporal(t) || isNull(t) ||
		t.ID() == arrow.BOOL || t.ID() == arrow.BINARY
}

func (ck *checker) is(e *Is) (*node, error) {
	x, err := ck.check(e.X)
	if err != nil {
		return nil, err
	}
	not := e.Not
	n := &node{kind: kCall, typ: tBool, args: []*node{x}}
	switch e.What {
	case "NULL":
		if !x.nullable {
			// DataFusion simplifies a test that cannot succeed (or fail)
			// to a constant, which drops the column from a projection's
			// inputs.
			return litNode(not, tBool), nil
		}
		n.op = "is_null"
		if not {
			n.op = "is_not_null"
		}
		n.fn = func(a []any) (any, error) { return (a[0] == nil) != not, nil }
		return n, nil
	}
	if x, err = asBool(x, e.At); err != nil {
		return nil, err
	}
	n.args[0] = x
	var want any
	switch e.What {
	case "TRUE":
		want = true
	case "FALSE":
		want = false
	}
	n.op = "is_" + strings.ToLower(e.What)
	n.fn = func(a []any) (any, error) { return (a[0] == want) != not, nil }
	return n, nil
}

func (ck *checker) in(e *In) (*node, error) {
	rule := ck.rule
	x, err := ck.check(e.X)
	if err != nil {
		return nil, err
	}
	list, err := ck.checkAll(e.List)
	if err != nil {
		return nil, err
	}
	t := x.typ
	if rule && x.kind == kCol {
		for i, v := range list {
			if v.isLitSrc && v.kind == kLit {
				if list[i], err = literalToColumn(v, t, e.At); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, v := range list {
		var ok bool
		if t, ok = commonType(t, v.typ); !ok {
			return nil, errAt(ErrType, e.At, "IN list mixes %s and %s", x.typ, v.typ)
		}
	}
	if x, err = coerceTo(x, t); err != nil {
		return nil, err
	}
	args := []*node{x}
	nullable := x.nullable
	for _, v := range list {
		c, err := coerceTo(v, t)
		if err != nil {
			return nil, err
		}
		args = append(args, c)
		nullable = nullable || c.nullable
	}
	not := e.Not
	n := &node{kind: kCall, typ: tBool, op: "in", args: args, nullable: nullable, aux: not}
	n.fn = func(a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		sawNull := false
		for _, v := range a[1:] {
			if v == nil {
				sawNull = true
				continue
			}
			if compareValues(a[0], v) == 0 {
				return !not, nil
			}
		}
		if sawNull {
			return nil, nil
		}
		return not, nil
	}
	return n, nil
}

func (ck *checker) between(e *Between) (*node, error) {
	// x BETWEEN lo AND hi is x >= lo AND x <= hi, with x evaluated twice;
	// expressions have no side effects, so that is exact.
	lo := &Binary{At: e.At, Op: ">=", L: e.X, R: e.Lo}
	hi := &Binary{At: e.At, Op: "<=", L: e.X, R: e.Hi}
	both, err := ck.checkRule(&Binary{At: e.At, Op: "AND", L: lo, R: hi}, ck.rule)
	if err != nil || !e.Not {
		return both, err
	}
	// NOT BETWEEN keeps the rule (Lance sees one negated Between).
	return fold(call("not", tBool, func(a []any) (any, error) { return !a[0].(bool), nil }, both)), nil
}

func (ck *checker) cast(e *Cast) (*node, error) {
	x, err := ck.check(e.X)
	if err != nil {
		return nil, err
	}
	t, ok := sqlType(e.TypeName)
	if !ok {
		return nil, errAt(ErrUnsupported, e.At, "unsupported data type %s", e.TypeName)
	}
	if e.Try && !arrow.TypeEqual(x.typ, t) {
		cast, err := caster(x.typ, t)
		if err != nil {
			return nil, withPos(err, e.At)
		}
		n := call("try_cast", t, func(a []any) (any, error) {
			v, err := cast(a[0])
			if err != nil {
				return nil, nil
			}
			return v, nil
		}, x)
		n.nullable = true
		return n, nil
	}
	return castNode(x, t, e.At)
}

// castNode is an explicit CAST; unlike coerceTo it keeps the node
// non-literal-sourced so Lance's literal rule does not apply to it.
func castNode(x *node, t arrow.DataType, at int) (*node, error) {
	if isList(x.typ) || x.typ.ID() == arrow.STRUCT || isList(t) || t.ID() == arrow.STRUCT {
		if !arrow.TypeEqual(x.typ, t) && !(isList(x.typ) && isString(t)) {
			return nil, errAt(ErrUnsupported, at, "cannot cast %s to %s", x.typ, t)
		}
	}
	n, err := coerceTo(x, t)
	if err != nil {
		return nil, errAt(ErrType, at, "%v", err)
	}
	if n == x {
		return n, nil
	}
	if n.kind == kLit {
		n.isLitSrc = false
	}
	return n, nil
}

func (ck *checker) caseExpr(e *Case) (*node, error) {
	var operand *node
	var err error
	if e.Operand != nil {
		if operand, err = ck.check(e.Operand); err != nil {
			return nil, err
		}
	}
	var conds, vals []*node
	for _, w := range e.Whens {
		c, err := ck.check(w.Cond)
		if err != nil {
			return nil, err
		}
		if operand != nil {
			o, cc, err := unify(operand, c, w.Cond.Pos(), false)
			if err != nil {
				return nil, err
			}
			c = call("=", tBool, func(a []any) (any, error) { return compareValues(a[0], a[1]) == 0, nil }, o, cc)
		} else if c, err = asBool(c, w.Cond.Pos()); err != nil {
			return nil, err
		}
		v, err := ck.check(w.Then)
		if err != nil {
			return nil, err
		}
		conds = append(conds, c)
		vals = append(vals, v)
	}
	var els *node
	if e.Else != nil {
		if els, err = ck.check(e.Else); err != nil {
			return nil, err
		}
	} else {
		els = litNode(nil, tNull)
	}
	t := els.typ
	for _, v := range vals {
		var ok bool
		if t, ok = commonType(t, v.typ); !ok {
			return nil, errAt(ErrType, e.At, "CASE branches mix %s and %s", t, v.typ)
		}
	}
	n := &node{kind: kCase, typ: t}
	for i := range conds {
		v, err := coerceTo(vals[i], t)
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, conds[i], v)
		n.nullable = n.nullable || v.nullable
	}
	if els, err = coerceTo(els, t); err != nil {
		return nil, err
	}
	n.args = append(n.args, els)
	n.nullable = n.nullable || els.nullable
	return n, nil
}

func (ck *checker) index(e *Index) (*node, error) {
	x, err := ck.check(e.X)
	if err != nil {
		return nil, err
	}
	i, err := ck.check(e.Index)
	if err != nil {
		return nil, err
	}
	return indexNode(x, i, e.At, e.Index.Pos())
}

// indexNode is list[i]: 1-based, negative from the end, NULL out of range.
func indexNode(x, i *node, at, idxAt int) (*node, error) {
	var err error
	if !isList(x.typ) {
		return nil, errAt(ErrType, at, "cannot index a %s", x.typ)
	}
	if !isInteger(i.typ) {
		return nil, errAt(ErrType, idxAt, "list index must be an integer, got %s", i.typ)
	}
	if i, err = coerceTo(i, tInt64); err != nil {
		return nil, err
	}
	elem := x.typ.(arrow.ListLikeType).Elem()
	n := call("index", elem, func(a []any) (any, error) {
		list, k := a[0].([]any), a[1].(int64)
		if k < 0 {
			k += int64(len(list)) + 1
		}
		if k < 1 || k > int64(len(list)) {
			return nil, nil
		}
		return list[k-1], nil
	}, x, i)
	n.nullable = true
	return n, nil
}

// mixedSignedness reports a signed and an unsigned integer operand with no
// common integer type (Int64 with UInt64), outside Lance's literal rule.
// DataFusion compares them as Decimal128(20, 0); comparing them exactly
// gives the same answers.
func mixedSignedness(l, r *node, rule bool) bool {
	if rule && ((l.kind == kCol && r.kind == kLit && r.isLitSrc) || (r.kind == kCol && l.kind == kLit && l.isLitSrc)) {
		return false
	}
	if !isInteger(l.typ) || !isInteger(r.typ) {
		return false
	}
	_, ok := numericCommon(l.typ, r.typ)
	return !ok
}

// mixedCompare compares an int64 with a uint64 value exactly.
func mixedCompare(op string, l, r *node) *node {
	return call("cmp_mixed", tBool, func(a []any) (any, error) {
		return cmpOp(op, compareMixed(a[0], a[1])), nil
	}, l, r)
}

func compareMixed(a, b any) int {
	switch x := a.(type) {
	case int64:
		if x < 0 {
			return -1
		}
		return compareValues(uint64(x), b.(uint64))
	case uint64:
		if y := b.(int64); y < 0 {
			return 1
		}
		return compareValues(x, uint64(b.(int64)))
	}
	return 0
}

// dateArith is DataFusion's date ± integer: the date that many days later
// (earlier). Lance's literal rule comes first: `d + 1` next to the column
// d is refused (the 1 cannot be a date), `(d + 1) IS NULL` or `d + i32`
// are dates.
func dateArith(op string, l, r *node, rule bool) (*node, bool) {
	if rule && (l.kind == kCol && r.kind == kLit && r.isLitSrc || r.kind == kCol && l.kind == kLit && l.isLitSrc) {
		return nil, false
	}
	date, days, sign := l, r, int64(1)
	switch {
	case op == "+" && l.typ.ID() == arrow.DATE32 && isInteger(r.typ):
	case op == "+" && r.typ.ID() == arrow.DATE32 && isInteger(l.typ):
		date, days = r, l
	case op == "-" && l.typ.ID() == arrow.DATE32 && isInteger(r.typ):
		sign = -1
	default:
		return nil, false
	}
	return call("date_add_days", tDate32, func(a []any) (any, error) {
		var n int64
		switch x := a[1].(type) {
		case int64:
			n = x
		case uint64:
			if x > math.MaxInt32 {
				return nil, fmt.Errorf("%w: %d days is out of the range of dates", ErrEval, x)
			}
			n = int64(x)
		}
		v := a[0].(int64) + sign*n
		if v < math.MinInt32 || v > math.MaxInt32 {
			return nil, fmt.Errorf("%w: date out of range", ErrEval)
		}
		return v, nil
	}, date, days), true
}
