package sqlexpr

import (
	"bytes"
	"strings"
)

// maxDepth bounds expression nesting so hostile input cannot exhaust the
// stack.
const maxDepth = 256

// Binding powers, low to high.
const (
	precOr = iota + 1
	precAnd
	precNot
	precCompare
	precAdd
	precMul
	precUnary
	precPostfix
)

// parser is a Pratt parser over a pre-lexed token slice.
type parser struct {
	src   string
	toks  []token
	i     int
	depth int
}

// Parse parses one SQL expression in the projection dialect; it is
// ParseProjection.
func Parse(src string) (Expr, error) { return ParseProjection(src) }

// ParseProjection parses one SQL expression as LanceDB 0.39 reads a
// projection (query().select, a view's select): "x" is the string 'x'.
func ParseProjection(src string) (Expr, error) { return parseExpr(src, false) }

// ParseFilter parses one SQL expression as LanceDB 0.39 reads a filter
// (query().where, a view's where): "x" is the column x, matched
// case-sensitively, and "st"."a" a struct field.
func ParseFilter(src string) (Expr, error) { return parseExpr(src, true) }

func parseExpr(src string, filter bool) (Expr, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	if filter {
		p.filterDialect()
	}
	e, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	if err := p.clauseAt(0); err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, errAt(ErrSyntax, t.pos, "expected end of expression, found %q", t.text)
	}
	return e, nil
}

func newParser(src string) (*parser, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	return &parser{toks: toks}, nil
}

// filterDialect switches the tokens not yet read to the filter dialect:
// text in double quotes becomes a quoted name.
func (p *parser) filterDialect() {
	for k := p.i; k < len(p.toks); k++ {
		if p.toks[k].dq {
			p.toks[k].kind = tokQuoted
		}
	}
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) peekAt(k int) token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return p.toks[len(p.toks)-1]
}
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (p *parser) acceptKw(kw string) bool {
	if p.peek().is(kw) {
		p.i++
		return true
	}
	return false
}

func (p *parser) acceptOp(op string) bool {
	if p.peek().isOp(op) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expectKw(kw string) error {
	if !p.acceptKw(kw) {
		t := p.peek()
		return errAt(ErrSyntax, t.pos, "expected %s, found %s", kw, describe(t))
	}
	return nil
}

func (p *parser) expectOp(op string) error {
	if !p.acceptOp(op) {
		t := p.peek()
		return errAt(ErrSyntax, t.pos, "expected %q, found %s", op, describe(t))
	}
	return nil
}

func describe(t token) string {
	if t.kind == tokEOF {
		return "end of input"
	}
	return "\"" + oneLine(t.text) + "\""
}

// expr parses an expression whose operators bind tighter than minPrec.
func (p *parser) expr(minPrec int) (Expr, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return nil, errAt(ErrSyntax, p.peek().pos, "expression nested deeper than %d levels", maxDepth)
	}
	left, err := p.prefix()
	if err != nil {
		return nil, err
	}
	for {
		prec := p.infixPrec()
		if prec == 0 || prec <= minPrec {
			return left, nil
		}
		left, err = p.infix(left, prec)
		if err != nil {
			return nil, err
		}
	}
}

// infixPrec returns the binding power of the operator at the cursor, or 0.
func (p *parser) infixPrec() int {
	t := p.peek()
	switch t.kind {
	case tokOp:
		switch t.text {
		case "=", "<>", "!=", "<", "<=", ">", ">=":
			return precCompare
		case "+", "-", "||":
			return precAdd
		case "*", "/", "%":
			return precMul
		case "[", "::", ".":
			return precPostfix
		}
	case tokIdent:
		switch strings.ToUpper(t.text) {
		case "OR":
			return precOr
		case "AND":
			return precAnd
		case "IS", "IN", "BETWEEN", "LIKE", "ILIKE":
			return precCompare
		case "NOT":
			n := p.peekAt(1)
			if n.is("IN") || n.is("BETWEEN") || n.is("LIKE") || n.is("ILIKE") {
				return precCompare
			}
		}
	}
	return 0
}

func (p *parser) infix(left Expr, prec int) (Expr, error) {
	t := p.next()
	if t.kind == tokOp {
		switch t.text {
		case "[":
			idx, err := p.expr(0)
			if err != nil {
				return nil, err
			}
			if err := p.expectOp("]"); err != nil {
				return nil, err
			}
			return &Index{At: left.Pos(), X: left, Index: idx}, nil
		case "::":
			name, err := p.typeName()
			if err != nil {
				return nil, err
			}
			return &Cast{At: left.Pos(), X: left, TypeName: name}, nil
		case ".":
			n := p.next()
			if n.kind != tokIdent && n.kind != tokQuoted {
				return nil, errAt(ErrSyntax, n.pos, "expected a field name after '.', found %s", describe(n))
			}
			if col, ok := left.(*Column); ok {
				path := append(append([]string(nil), col.Path...), n.text)
				quote := make([]byte, len(col.Path), len(path))
				for i := range col.Path {
					quote[i] = col.quoteOf(i)
				}
				quote = append(quote, n.quote())
				if !bytes.ContainsFunc(quote, func(r rune) bool { return r != 0 }) {
					quote = nil // all bare
				}
				return &Column{At: col.At, Path: path, Quote: quote}, nil
			}
			// A field of a computed struct: get_field(x, 'name').
			name := &Literal{At: n.pos, Kind: LitString, Text: n.text}
			return &Call{At: left.Pos(), Name: "get_field", Args: []Expr{left, name}}, nil
		}
		right, err := p.expr(prec)
		if err != nil {
			return nil, err
		}
		op := t.text
		if op == "!=" {
			op = "<>"
		}
		return &Binary{At: left.Pos(), Op: op, L: left, R: right}, nil
	}
	kw := strings.ToUpper(t.text)
	neg := false
	if kw == "NOT" {
		neg = true
		kw = strings.ToUpper(p.next().text)
	}
	switch kw {
	case "OR", "AND":
		right, err := p.expr(prec)
		if err != nil {
			return nil, err
		}
		return &Binary{At: left.Pos(), Op: kw, L: left, R: right}, nil
	case "IS":
		return p.isTail(left)
	case "IN":
		if err := p.expectOp("("); err != nil {
			return nil, err
		}
		list, err := p.exprList(")")
		if err != nil {
			return nil, err
		}
		if len(list) == 0 {
			return nil, errAt(ErrSyntax, t.pos, "IN needs at least one value")
		}
		return &In{At: left.Pos(), X: left, Not: neg, List: list}, nil
	case "BETWEEN":
		lo, err := p.expr(precCompare)
		if err != nil {
			return nil, err
		}
		if err := p.expectKw("AND"); err != nil {
			return nil, err
		}
		hi, err := p.expr(precCompare)
		if err != nil {
			return nil, err
		}
		return &Between{At: left.Pos(), X: left, Not: neg, Lo: lo, Hi: hi}, nil
	case "LIKE", "ILIKE":
		pat, err := p.expr(precCompare)
		if err != nil {
			return nil, err
		}
		l := &Like{At: left.Pos(), X: left, Not: neg, Fold: kw == "ILIKE", Pattern: pat}
		if p.acceptKw("ESCAPE") {
			if l.Escape, err = p.expr(precCompare); err != nil {
				return nil, err
			}
		}
		return l, nil
	}
	return nil, errAt(ErrSyntax, t.pos, "unexpected %s", describe(t))
}

func (p *parser) isTail(left Expr) (Expr, error) {
	neg := p.acceptKw("NOT")
	t := p.next()
	switch {
	case t.is("NULL"), t.is("TRUE"), t.is("FALSE"), t.is("UNKNOWN"):
		return &Is{At: left.Pos(), X: left, Not: neg, What: strings.ToUpper(t.text)}, nil
	case t.is("DISTINCT"):
		if err := p.expectKw("FROM"); err != nil {
			return nil, err
		}
		right, err := p.expr(precCompare)
		if err != nil {
			return nil, err
		}
		op := "IS DISTINCT FROM"
		if neg {
			op = "IS NOT DISTINCT FROM"
		}
		return &Binary{At: left.Pos(), Op: op, L: left, R: right}, nil
	}
	return nil, errAt(ErrSyntax, t.pos, "expected NULL, TRUE, FALSE, UNKNOWN or DISTINCT FROM after IS, found %s", describe(t))
}

// exprList parses comma-separated expressions up to the closing operator.
func (p *parser) exprList(closing string) ([]Expr, error) {
	var list []Expr
	if p.acceptOp(closing) {
		return list, nil
	}
	for {
		e, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		list = append(list, e)
		if p.acceptOp(closing) {
			return list, nil
		}
		if err := p.expectOp(","); err != nil {
			return nil, err
		}
	}
}

func (p *parser) prefix() (Expr, error) {
	t := p.next()
	switch t.kind {
	case tokNumber:
		kind := LitInt
		if strings.ContainsAny(t.text, ".eE") {
			kind = LitFloat
		}
		return &Literal{At: t.pos, Kind: kind, Text: t.text}, nil
	case tokString:
		return &Literal{At: t.pos, Kind: LitString, Text: t.text, DoubleQuoted: t.dq}, nil
	case tokQuoted:
		return &Column{At: t.pos, Path: []string{t.text}, Quote: []byte{t.quote()}}, nil
	case tokOp:
		switch t.text {
		case "(":
			e, err := p.expr(0)
			if err != nil {
				return nil, err
			}
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
			return e, nil
		case "[":
			var elems []Expr
			if !p.acceptOp("]") {
				var err error
				if elems, err = p.exprList("]"); err != nil {
					return nil, err
				}
			}
			return &Array{At: t.pos, Elems: elems}, nil
		case "-", "+":
			x, err := p.expr(precUnary)
			if err != nil {
				return nil, err
			}
			return &Unary{At: t.pos, Op: t.text, X: x}, nil
		}
		return nil, errAt(ErrSyntax, t.pos, "expected an expression, found %s", describe(t))
	case tokEOF:
		return nil, errAt(ErrSyntax, t.pos, "expected an expression, found end of input")
	}
	return p.keywordOrName(t)
}

// keywordOrName handles an identifier token in prefix position: keywords
// that start an expression, function calls, or a column name.
func (p *parser) keywordOrName(t token) (Expr, error) {
	nextIsParen := p.peek().isOp("(")
	switch strings.ToUpper(t.text) {
	case "NULL":
		return &Literal{At: t.pos, Kind: LitNull}, nil
	case "TRUE", "FALSE":
		return &Literal{At: t.pos, Kind: LitBool, Text: strings.ToLower(t.text)}, nil
	case "NOT":
		x, err := p.expr(precNot)
		if err != nil {
			return nil, err
		}
		return &Unary{At: t.pos, Op: "NOT", X: x}, nil
	case "DATE", "TIMESTAMP":
		if s := p.peek(); s.kind == tokString {
			p.i++
			kind := LitDate
			if t.is("TIMESTAMP") {
				kind = LitTimestamp
			}
			return &Literal{At: t.pos, Kind: kind, Text: s.text}, nil
		}
	case "INTERVAL":
		if p.peek().kind == tokString {
			return nil, errAt(ErrUnsupported, t.pos, "INTERVAL literals are not supported")
		}
	case "CASE":
		return p.caseExpr(t)
	case "CAST", "TRY_CAST":
		if nextIsParen {
			return p.castExpr(t)
		}
	case "EXTRACT":
		if nextIsParen {
			return p.extractExpr(t)
		}
	case "TRIM":
		if nextIsParen {
			return p.trimExpr(t)
		}
	case "SUBSTRING", "SUBSTR":
		if nextIsParen {
			return p.substringExpr(t)
		}
	}
	if nextIsParen {
		p.i++
		call := &Call{At: t.pos, Name: strings.ToLower(t.text)}
		if p.peek().isOp("*") && p.peekAt(1).isOp(")") {
			p.i += 2
			call.Star = true
			return call, nil
		}
		args, err := p.exprList(")")
		if err != nil {
			return nil, err
		}
		call.Args = args
		return call, nil
	}
	return &Column{At: t.pos, Path: []string{t.text}}, nil
}
