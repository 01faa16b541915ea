package sqlexpr

import "strings"

// Special syntactic forms: CASE, CAST, EXTRACT, TRIM, SUBSTRING.

func (p *parser) caseExpr(t token) (Expr, error) {
	c := &Case{At: t.pos}
	var err error
	if !p.peek().is("WHEN") {
		if c.Operand, err = p.expr(0); err != nil {
			return nil, err
		}
	}
	for p.acceptKw("WHEN") {
		var w When
		if w.Cond, err = p.expr(0); err != nil {
			return nil, err
		}
		if err := p.expectKw("THEN"); err != nil {
			return nil, err
		}
		if w.Then, err = p.expr(0); err != nil {
			return nil, err
		}
		c.Whens = append(c.Whens, w)
	}
	if len(c.Whens) == 0 {
		return nil, errAt(ErrSyntax, p.peek().pos, "expected WHEN, found %s", describe(p.peek()))
	}
	if p.acceptKw("ELSE") {
		if c.Else, err = p.expr(0); err != nil {
			return nil, err
		}
	}
	if err := p.expectKw("END"); err != nil {
		return nil, err
	}
	return c, nil
}

func (p *parser) castExpr(t token) (Expr, error) {
	p.i++ // (
	x, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	if err := p.expectKw("AS"); err != nil {
		return nil, err
	}
	name, err := p.typeName()
	if err != nil {
		return nil, err
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	return &Cast{At: t.pos, X: x, TypeName: name, Try: t.is("TRY_CAST")}, nil
}

// typeName reads a SQL type name such as BIGINT, DOUBLE PRECISION,
// INT UNSIGNED or VARCHAR(10), normalized to upper case with single
// spaces; a length/precision suffix is dropped.
func (p *parser) typeName() (string, error) {
	t := p.next()
	if t.kind != tokIdent {
		return "", errAt(ErrSyntax, t.pos, "expected a type name, found %s", describe(t))
	}
	parts := []string{strings.ToUpper(t.text)}
	for {
		n := p.peek()
		if n.is("PRECISION") || n.is("UNSIGNED") || n.is("VARYING") || n.is("TIME") || n.is("ZONE") || n.is("WITH") || n.is("WITHOUT") {
			parts = append(parts, strings.ToUpper(n.text))
			p.i++
			continue
		}
		break
	}
	if p.acceptOp("(") {
		for !p.acceptOp(")") {
			if n := p.next(); n.kind != tokNumber && !n.isOp(",") {
				return "", errAt(ErrSyntax, n.pos, "expected a type length, found %s", describe(n))
			}
		}
	}
	return strings.Join(parts, " "), nil
}

// extractExpr rewrites EXTRACT(field FROM x) to date_part('field', x).
func (p *parser) extractExpr(t token) (Expr, error) {
	p.i++ // (
	f := p.next()
	if f.kind != tokIdent && f.kind != tokString {
		return nil, errAt(ErrSyntax, f.pos, "expected a date part name, found %s", describe(f))
	}
	if err := p.expectKw("FROM"); err != nil {
		return nil, err
	}
	x, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	part := &Literal{At: f.pos, Kind: LitString, Text: strings.ToLower(f.text)}
	return &Call{At: t.pos, Name: "date_part", Args: []Expr{part, x}}, nil
}

// trimExpr handles TRIM([BOTH|LEADING|TRAILING] [chars] FROM x) and
// TRIM(x), rewriting them to btrim/ltrim/rtrim calls.
func (p *parser) trimExpr(t token) (Expr, error) {
	p.i++ // (
	name := "btrim"
	switch {
	case p.acceptKw("BOTH"):
	case p.acceptKw("LEADING"):
		name = "ltrim"
	case p.acceptKw("TRAILING"):
		name = "rtrim"
	}
	var chars Expr
	if !p.acceptKw("FROM") {
		first, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		if p.acceptOp(")") {
			return &Call{At: t.pos, Name: name, Args: []Expr{first}}, nil
		}
		if p.acceptOp(",") {
			c, err := p.expr(0)
			if err != nil {
				return nil, err
			}
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
			return &Call{At: t.pos, Name: name, Args: []Expr{first, c}}, nil
		}
		if err := p.expectKw("FROM"); err != nil {
			return nil, err
		}
		chars = first
	}
	x, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	args := []Expr{x}
	if chars != nil {
		args = append(args, chars)
	}
	return &Call{At: t.pos, Name: name, Args: args}, nil
}

// substringExpr handles SUBSTRING(x FROM a [FOR b]) and the plain call
// form, rewriting both to substr(x, a[, b]).
func (p *parser) substringExpr(t token) (Expr, error) {
	p.i++ // (
	x, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	args := []Expr{x}
	if p.acceptKw("FROM") {
		from, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		args = append(args, from)
		if p.acceptKw("FOR") {
			n, err := p.expr(0)
			if err != nil {
				return nil, err
			}
			args = append(args, n)
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		return &Call{At: t.pos, Name: "substr", Args: args}, nil
	}
	for p.acceptOp(",") {
		a, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		args = append(args, a)
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	return &Call{At: t.pos, Name: "substr", Args: args}, nil
}
