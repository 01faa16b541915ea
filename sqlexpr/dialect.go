package sqlexpr

// LanceDB 0.39 reads double quotes with two rules (lancedb-mv-semantics.md
// §6.1): a projection (query().select, a view's select) reads "x" as the
// string 'x'; a filter (query().where, a view's where) reads it as the
// column x, matched case-sensitively. ParseProjection and ParseFilter
// apply each rule; the trees remember which one they were parsed with, so
// a projection tree compiled as a filter (or the reverse) is refused
// rather than silently read with the wrong rule.

// checkDialect refuses e when it was parsed with the other dialect's
// reading of double quotes.
func checkDialect(e Expr, filter bool) error {
	var err error
	walkExpr(e, func(x Expr) {
		if err != nil {
			return
		}
		switch x := x.(type) {
		case *Column:
			if !filter && x.doubleQuoted() {
				err = errAt(ErrSyntax, x.At, "%s is a filter's double-quoted name in a projection (parse projections with ParseProjection)", x)
			}
		case *Literal:
			if filter && x.DoubleQuoted {
				err = errAt(ErrSyntax, x.At, "%s is a projection's double-quoted string in a filter (parse filters with ParseFilter)", x)
			}
		}
	})
	return err
}

// walkExpr calls fn for e and every expression below it.
func walkExpr(e Expr, fn func(Expr)) {
	if e == nil {
		return
	}
	fn(e)
	switch x := e.(type) {
	case *Unary:
		walkExpr(x.X, fn)
	case *Binary:
		walkExpr(x.L, fn)
		walkExpr(x.R, fn)
	case *Is:
		walkExpr(x.X, fn)
	case *In:
		walkExpr(x.X, fn)
		for _, a := range x.List {
			walkExpr(a, fn)
		}
	case *Between:
		walkExpr(x.X, fn)
		walkExpr(x.Lo, fn)
		walkExpr(x.Hi, fn)
	case *Like:
		walkExpr(x.X, fn)
		walkExpr(x.Pattern, fn)
		walkExpr(x.Escape, fn)
	case *Cast:
		walkExpr(x.X, fn)
	case *Case:
		walkExpr(x.Operand, fn)
		for _, w := range x.Whens {
			walkExpr(w.Cond, fn)
			walkExpr(w.Then, fn)
		}
		walkExpr(x.Else, fn)
	case *Call:
		for _, a := range x.Args {
			walkExpr(a, fn)
		}
	case *Index:
		walkExpr(x.X, fn)
		walkExpr(x.Index, fn)
	case *Array:
		for _, a := range x.Elems {
			walkExpr(a, fn)
		}
	}
}

// filterBooleans applies what Lance does to a filter before planning it
// (coerce_filter_type_to_boolean): every regexp_match(...) reached from
// the top through binary operators, NOT, IS NULL and IS NOT NULL becomes
// `regexp_match(...) IS NOT NULL`, so `regexp_match(s, 'a')` keeps the
// rows that match, and `regexp_match(s, 'a') IS NOT NULL` every row.
func filterBooleans(e Expr) Expr {
	switch x := e.(type) {
	case *Call:
		if x.Name == "regexp_match" {
			return &Is{At: x.At, X: x, Not: true, What: "NULL"}
		}
	case *Binary:
		l, r := filterBooleans(x.L), filterBooleans(x.R)
		if l != x.L || r != x.R {
			return &Binary{At: x.At, Op: x.Op, L: l, R: r}
		}
	case *Unary:
		if x.Op == "NOT" {
			if y := filterBooleans(x.X); y != x.X {
				return &Unary{At: x.At, Op: x.Op, X: y}
			}
		}
	case *Is:
		if x.What == "NULL" {
			if y := filterBooleans(x.X); y != x.X {
				return &Is{At: x.At, X: y, Not: x.Not, What: x.What}
			}
		}
	}
	return e
}
