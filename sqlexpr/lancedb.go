package sqlexpr

import (
	"sort"
	"strings"
)

// Construct is SQL that sqlexpr evaluates but LanceDB 0.39 cannot plan
// (extensions.go): a view using it is refreshed by mvd, while LanceDB's
// own refresh of it fails ("… is not supported SQL in lance").
type Construct struct {
	// Name is the construct as SQL spells it: "CASE", "CEIL",
	// "IS DISTINCT FROM", "CAST AS VARCHAR", …
	Name string
	// Pos is where it starts in the expression (a byte offset).
	Pos int
}

// lancedbTypes are the CAST type names LanceDB 0.39's planner accepts
// (checked against it: VARCHAR, TEXT, INT8, REAL, BOOL, BYTEA… are
// refused with "Unsupported data type").
var lancedbTypes = map[string]bool{
	"STRING": true, "BIGINT": true, "INT": true, "INTEGER": true, "SMALLINT": true, "TINYINT": true,
	"BIGINT UNSIGNED": true, "INT UNSIGNED": true, "INTEGER UNSIGNED": true, "SMALLINT UNSIGNED": true,
	"TINYINT UNSIGNED": true, "DOUBLE": true, "FLOAT": true, "BOOLEAN": true, "DATE": true,
	"TIMESTAMP": true, "DATETIME": true, "BINARY": true, "DECIMAL": true,
}

// LanceDBUnsupported lists the constructs of the expression src (a filter
// when filter is true, else a projection) that LanceDB 0.39 refuses, in
// order of position; nil when it has none or does not parse (its parse
// error is reported where it is compiled).
func LanceDBUnsupported(src string, filter bool) []Construct {
	p, err := newParser(src)
	if err != nil {
		return nil
	}
	if filter {
		p.filterDialect()
	}
	e, err := p.expr(0)
	if err != nil || p.peek().kind != tokEOF {
		return nil
	}
	// TRIM(…) and EXTRACT(… FROM …) became btrim and date_part calls,
	// which LanceDB plans; only their SQL forms are refused.
	var out []Construct
	for _, t := range p.toks {
		if (t.is("TRIM") || t.is("EXTRACT")) && p.tokenAfter(t).isOp("(") {
			out = append(out, Construct{Name: strings.ToUpper(t.text), Pos: t.pos})
		}
	}
	walkExpr(e, func(e Expr) {
		if name := unsupportedByLanceDB(e); name != "" {
			out = append(out, Construct{Name: name, Pos: e.Pos()})
		}
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pos < out[j].Pos })
	return out
}

// tokenAfter is the token following t.
func (p *parser) tokenAfter(t token) token {
	for i, u := range p.toks {
		if u.pos == t.pos && i+1 < len(p.toks) {
			return p.toks[i+1]
		}
	}
	return token{kind: tokEOF}
}

// unsupportedByLanceDB names the construct of node e that LanceDB 0.39
// refuses, or "" (every case checked against LanceDB 0.39).
func unsupportedByLanceDB(e Expr) string {
	switch x := e.(type) {
	case *Case:
		return "CASE"
	case *Call:
		switch x.Name {
		case "substr":
			return "SUBSTR"
		case "ceil", "floor":
			return strings.ToUpper(x.Name)
		}
	case *Binary:
		if x.Op == "IS DISTINCT FROM" || x.Op == "IS NOT DISTINCT FROM" {
			return x.Op
		}
	case *Is:
		if x.What == "UNKNOWN" {
			if x.Not {
				return "IS NOT UNKNOWN"
			}
			return "IS UNKNOWN"
		}
	case *Unary:
		if x.Op == "+" {
			return "unary +"
		}
	case *Like:
		if x.Escape != nil {
			if l, ok := x.Escape.(*Literal); !ok || l.Kind != LitString || l.Text != `\` {
				return "LIKE … ESCAPE other than backslash"
			}
		}
	case *Cast:
		if !lancedbTypes[x.TypeName] {
			return "CAST AS " + x.TypeName
		}
	}
	return ""
}
