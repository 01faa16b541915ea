package sqlexpr

import "strings"

// A view is a projection and filter of one table, so the clauses of a
// full query (GROUP BY, JOIN, …) are refused by name, not with the
// parser's "expected end of statement" at the first word it stops on.

// clauseName is the query clause that token t (followed by next) starts
// and a view cannot have, or "".
func clauseName(t, next token) string {
	if t.kind != tokIdent {
		return ""
	}
	switch w := strings.ToUpper(t.text); w {
	case "GROUP", "ORDER":
		if next.is("BY") {
			return w + " BY"
		}
	case "HAVING", "UNION", "INTERSECT", "EXCEPT", "OFFSET", "WINDOW", "QUALIFY":
		return w
	case "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "NATURAL":
		return "JOIN"
	}
	return ""
}

// errClause is the error for an unsupported clause named what at pos.
func errClause(what string, pos int) error {
	return errAt(ErrUnsupported, pos, "not supported in a materialized view: %s (views are projections and filters of one table)", what)
}

// clauseAt returns errClause when the token k ahead starts a clause a view
// cannot have, else nil.
func (p *parser) clauseAt(k int) error {
	t := p.peekAt(k)
	if name := clauseName(t, p.peekAt(k+1)); name != "" {
		return errClause(name, t.pos)
	}
	return nil
}

// distinctAt refuses SELECT DISTINCT: an unquoted DISTINCT followed by
// the start of an expression (a column named distinct would be quoted).
func (p *parser) distinctAt() error {
	t, n := p.peek(), p.peekAt(1)
	if !t.is("DISTINCT") || n.kind == tokEOF || n.isOp(",") || n.is("FROM") || n.is("AS") {
		return nil
	}
	return errClause("DISTINCT", t.pos)
}

// afterSource refuses what may follow a view's source table name in a
// query but not in a view: a join (also after an alias, or a comma) and
// the other clauses of clauseName.
func (p *parser) afterSource() error {
	t := p.peek()
	if t.isOp(",") {
		return errClause("JOIN", t.pos)
	}
	if err := p.clauseAt(0); err != nil {
		return err
	}
	// FROM src [AS] alias JOIN …
	k := 0
	if t.is("AS") {
		k = 1
	}
	if a := p.peekAt(k); (a.kind == tokIdent || a.kind == tokQuoted) && clauseName(a, p.peekAt(k+1)) == "" &&
		!a.is("WHERE") && !a.is("LIMIT") {
		if n := p.peekAt(k + 1); n.isOp(",") {
			return errClause("JOIN", n.pos)
		}
		if name := clauseName(p.peekAt(k+1), p.peekAt(k+2)); name == "JOIN" {
			return errClause(name, p.peekAt(k+1).pos)
		}
	}
	return nil
}
