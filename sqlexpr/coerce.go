package sqlexpr

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// coerceTo converts n to type t: constants are converted now, anything
// else gets a cast node.
func coerceTo(n *node, t arrow.DataType) (*node, error) {
	if arrow.TypeEqual(n.typ, t) {
		return n, nil
	}
	cast, err := caster(n.typ, t)
	if err != nil {
		return nil, err
	}
	if n.kind == kLit {
		v, err := cast(n.val)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrType, err)
		}
		out := litNode(v, t)
		out.isLitSrc = n.isLitSrc
		return out, nil
	}
	return call("cast", t, func(a []any) (any, error) { return cast(a[0]) }, n), nil
}

// literalToColumn implements Lance's rule for a column combined with a
// literal: the literal takes the column's type or the expression is
// refused.
func literalToColumn(lit *node, colType arrow.DataType, at int) (*node, error) {
	if lit.val == nil {
		return litNode(nil, colType), nil
	}
	ok := false
	switch v := lit.val.(type) {
	case int64:
		switch {
		case isSigned(colType):
			ok = fitsInt(v, colType.ID())
		case isUnsigned(colType):
			ok = v >= 0 && fitsUint(uint64(v), colType.ID())
		case isFloat(colType):
			ok = true
		}
	case uint64:
		ok = colType.ID() == arrow.UINT64 || isFloat(colType)
	case float64:
		ok = isFloat(colType)
	case string:
		ok = isString(colType)
	case bool:
		ok = colType.ID() == arrow.BOOL
	case []any:
		// A list literal against a list column of the same element type.
		if isList(lit.typ) && isList(colType) && arrow.TypeEqual(lit.typ.(arrow.ListLikeType).Elem(), colType.(arrow.ListLikeType).Elem()) {
			out := litNode(lit.val, colType)
			out.isLitSrc = lit.isLitSrc
			return out, nil
		}
	}
	if lit.typ.ID() == arrow.DATE32 || lit.typ.ID() == arrow.TIMESTAMP {
		ok = isTemporal(colType)
	}
	if !ok {
		return nil, errAt(ErrType, at, "received literal %s %v and could not convert to literal of type '%s'", lit.typ, lit.val, colType)
	}
	out, err := coerceTo(lit, colType)
	if err != nil && lit.typ.ID() == arrow.TIMESTAMP {
		// A local time the column's zone skips or repeats.
		return nil, errAt(ErrType, at, "timestamp literal against %s: %s", colType, stripKinds(err.Error()))
	}
	if err != nil {
		return nil, errAt(ErrType, at, "received literal %v and could not convert to literal of type '%s': %s", lit.val, colType, stripKinds(err.Error()))
	}
	return out, nil
}

// unify brings two operands to one type: Lance's literal rule when it
// applies here and one side is a column and the other a literal, else the
// common type.
func unify(a, b *node, at int, rule bool) (*node, *node, error) {
	if rule && a.kind == kCol && b.isLitSrc && b.kind == kLit {
		nb, err := literalToColumn(b, a.typ, at)
		return a, nb, err
	}
	if rule && b.kind == kCol && a.isLitSrc && a.kind == kLit {
		na, err := literalToColumn(a, b.typ, at)
		return na, b, err
	}
	t, ok := commonType(a.typ, b.typ)
	if !ok {
		return nil, nil, errAt(ErrType, at, "cannot combine %s with %s", a.typ, b.typ)
	}
	na, err := coerceTo(a, t)
	if err != nil {
		return nil, nil, err
	}
	nb, err := coerceTo(b, t)
	if err != nil {
		return nil, nil, err
	}
	return na, nb, nil
}
