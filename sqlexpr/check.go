package sqlexpr

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// checker type-checks one expression.
type checker struct {
	schema *arrow.Schema
	inputs map[string]bool
	// rule tells whether Lance's literal rule applies to the node being
	// checked. Lance applies it at the top of an expression and through
	// AND/OR only, not inside NOT, functions, CAST or nested arithmetic:
	// `u8 + 250` is UInt8 (wrapping), `chr(u8 + 250)` reads it as Int64.
	rule bool
}

// check type-checks e and folds constant subexpressions, as DataFusion's
// simplifier does before LanceDB derives types (a folded constant is not
// nullable unless it is NULL).
func (ck *checker) check(e Expr) (*node, error) { return ck.checkRule(e, false) }

// checkRule checks e with Lance's literal rule on or off for e itself.
func (ck *checker) checkRule(e Expr, rule bool) (*node, error) {
	saved := ck.rule
	ck.rule = rule
	n, err := ck.checkNode(e)
	ck.rule = saved
	if err != nil {
		return nil, withPos(err, e.Pos())
	}
	return fold(n), nil
}

// fold replaces a call or CASE whose operands are all constants by its
// value. Evaluation errors are left for run time, like DataFusion.
func fold(n *node) *node {
	if n.kind != kCall && n.kind != kCase {
		return n
	}
	if nullOperand(n) {
		// DataFusion's simplifier turns `x op NULL` into NULL for
		// comparison and arithmetic, dropping x from the inputs.
		return litNode(nil, n.typ)
	}
	for _, a := range n.args {
		if a.kind != kLit {
			return n
		}
	}
	var v any
	if n.kind == kCase {
		v = n.args[len(n.args)-1].val
		for i := 0; i+1 < len(n.args); i += 2 {
			if n.args[i].val == true {
				v = n.args[i+1].val
				break
			}
		}
	} else {
		vals := make([]any, len(n.args))
		null := false
		for i, a := range n.args {
			vals[i] = a.val
			null = null || a.val == nil
		}
		if !(n.strict && null) {
			var err error
			if v, err = n.fn(vals); err != nil {
				return n
			}
		}
	}
	return litNode(v, n.typ)
}

// nullOperand reports a comparison or arithmetic operator with a NULL
// constant operand.
func nullOperand(n *node) bool {
	switch n.op {
	case "=", "<>", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "like":
		for _, a := range n.args {
			if a.kind == kLit && a.val == nil {
				return true
			}
		}
	}
	return false
}

func (ck *checker) checkNode(e Expr) (*node, error) {
	switch e := e.(type) {
	case *Column:
		return ck.column(e)
	case *Literal:
		return literal(e)
	case *Unary:
		return ck.unary(e)
	case *Binary:
		return ck.binary(e)
	case *Is:
		return ck.is(e)
	case *In:
		return ck.in(e)
	case *Between:
		return ck.between(e)
	case *Like:
		return ck.like(e)
	case *Cast:
		return ck.cast(e)
	case *Case:
		return ck.caseExpr(e)
	case *Call:
		return ck.call(e)
	case *Index:
		return ck.index(e)
	case *Array:
		return ck.array(e)
	}
	return nil, fmt.Errorf("%w: unknown expression %T", ErrUnsupported, e)
}

func (ck *checker) checkAll(list []Expr) ([]*node, error) {
	out := make([]*node, len(list))
	for i, x := range list {
		n, err := ck.check(x)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

func (ck *checker) column(e *Column) (*node, error) {
	name := e.Path[0]
	idx := ck.schema.FieldIndices(name)
	if len(idx) == 0 && e.quoteOf(0) == 0 {
		// Fall back to a unique case-insensitive match.
		for i, f := range ck.schema.Fields() {
			if strings.EqualFold(f.Name, name) {
				idx = append(idx, i)
			}
		}
	}
	if len(idx) != 1 {
		return nil, errAt(ErrUnknownColumn, e.At, "unknown column '%s'", strings.Join(e.Path, "."))
	}
	f := ck.schema.Field(idx[0])
	n := &node{kind: kCol, col: idx[0], typ: f.Type, nullable: f.Nullable}
	if dt, ok := f.Type.(*arrow.DictionaryType); ok && len(e.Path) == 1 {
		// A dictionary column compares, matches and computes as its
		// values, as in DataFusion (`cat = 'a'`, `cat || 'x'`).
		n.typ, n.dict = dt.ValueType, true
	}
	ref := []string{f.Name}
	for _, part := range e.Path[1:] {
		st, ok := n.typ.(*arrow.StructType)
		if !ok {
			return nil, errAt(ErrType, e.At, "'%s' is a %s, not a struct", strings.Join(ref, "."), n.typ)
		}
		k, ok := st.FieldIdx(part)
		if !ok {
			return nil, errAt(ErrUnknownColumn, e.At, "unknown column '%s.%s'", strings.Join(ref, "."), part)
		}
		sf := st.Field(k)
		n.path = append(n.path, k)
		n.typ = sf.Type
		n.nullable = n.nullable || sf.Nullable
		ref = append(ref, sf.Name)
	}
	n.ref = strings.Join(ref, ".")
	n.refParts = ref
	ck.inputs[n.ref] = true
	return n, nil
}

func literal(e *Literal) (*node, error) {
	var n *node
	switch e.Kind {
	case LitNull:
		n = litNode(nil, tNull)
	case LitBool:
		n = litNode(e.Text == "true", tBool)
	case LitInt:
		v, err := strconv.ParseInt(e.Text, 10, 64)
		if u, uerr := strconv.ParseUint(e.Text, 10, 64); err != nil && uerr == nil {
			// Above Int64: DataFusion reads it as a UInt64 up to 2^64-1.
			n = litNode(u, tUint64)
		} else if err != nil {
			// Too big for UInt64 too: a Float64.
			f, ferr := strconv.ParseFloat(e.Text, 64)
			if ferr != nil {
				return nil, errAt(ErrSyntax, e.At, "bad number %s", e.Text)
			}
			n = litNode(f, tFloat64)
		} else {
			n = litNode(v, tInt64)
		}
	case LitFloat:
		v, err := strconv.ParseFloat(e.Text, 64)
		if err != nil {
			return nil, errAt(ErrSyntax, e.At, "bad number %s", e.Text)
		}
		n = litNode(v, tFloat64)
	case LitString:
		n = litNode(e.Text, tUtf8)
	case LitDate:
		d, err := parseDate(e.Text)
		if err != nil {
			return nil, errAt(ErrSyntax, e.At, "bad DATE literal '%s', expected YYYY-MM-DD", e.Text)
		}
		n = litNode(d, tDate32)
	case LitTimestamp:
		t := &arrow.TimestampType{Unit: arrow.Microsecond}
		v, err := parseTimestamp(e.Text, t.Unit)
		if err != nil {
			return nil, errAt(ErrSyntax, e.At, "bad TIMESTAMP literal '%s'", e.Text)
		}
		n = litNode(v, t)
	default:
		return nil, errAt(ErrSyntax, e.At, "unknown literal")
	}
	n.isLitSrc = true
	return n, nil
}

// array checks a list literal as Lance does: at least one element, every
// one a literal, all of one type. It is a constant list.
func (ck *checker) array(e *Array) (*node, error) {
	if len(e.Elems) == 0 {
		return nil, errAt(ErrType, e.At, "an empty list literal [] has no element type (LanceDB refuses it too); use make_array() or a cast")
	}
	var t arrow.DataType
	vals := make([]any, len(e.Elems))
	for i, x := range e.Elems {
		// Literals as sqlparser reads them: numbers (also negative),
		// strings, booleans and NULL; not DATE '…' or TIMESTAMP '…'.
		lit, ok := x.(*Literal)
		if u, neg := x.(*Unary); neg && u.Op == "-" {
			lit, ok = u.X.(*Literal)
			ok = ok && (lit.Kind == LitInt || lit.Kind == LitFloat)
		}
		if !ok || lit.Kind == LitDate || lit.Kind == LitTimestamp {
			return nil, errAt(ErrType, x.Pos(), "a list literal holds literal values only, not %s (use make_array)", x)
		}
		n, err := ck.check(x)
		if err != nil {
			return nil, err
		}
		if t == nil {
			t = n.typ
		} else if !arrow.TypeEqual(t, n.typ) {
			return nil, errAt(ErrType, x.Pos(), "list literal elements must have one type: %s, then %s", t, n.typ)
		}
		vals[i] = n.val
	}
	return litNode(vals, arrow.ListOf(t)), nil
}
