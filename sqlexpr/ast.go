package sqlexpr

import "strings"

// Expr is a parsed, untyped SQL expression. Its String form is valid SQL
// that parses back to an equal tree.
type Expr interface {
	// Pos is the byte offset where the expression starts in the source.
	Pos() int
	// String renders the expression as SQL, fully parenthesized.
	String() string
}

// Column references a source column, possibly a nested struct field
// (`st.a` has Path ["st", "a"]).
type Column struct {
	At   int
	Path []string
	// Quote holds, per element of Path, the quote it was written in: 0
	// (bare), '`', or '"' (only a filter reads double quotes as a name).
	// nil means all bare. A bare top-level name matches a field
	// case-insensitively when no field has it exactly, as in LanceDB; a
	// quoted one matches exactly. Struct fields always match exactly.
	Quote []byte
}

// quoteOf is the quote Path[i] was written in.
func (e *Column) quoteOf(i int) byte {
	if i < len(e.Quote) {
		return e.Quote[i]
	}
	return 0
}

// doubleQuoted reports whether any element of the path was written in
// double quotes, which only the filter dialect reads as a name.
func (e *Column) doubleQuoted() bool {
	for i := range e.Path {
		if e.quoteOf(i) == '"' {
			return true
		}
	}
	return false
}

// LitKind classifies a literal.
type LitKind int

// Literal kinds.
const (
	LitNull LitKind = iota
	LitBool
	LitInt
	LitFloat
	LitString
	LitDate
	LitTimestamp
)

// Literal is a constant. Text holds the literal as written (without
// quotes for strings, dates and timestamps).
type Literal struct {
	At   int
	Kind LitKind
	Text string
	// DoubleQuoted marks a string written in double quotes, which only
	// the projection dialect reads as a string.
	DoubleQuoted bool
}

// Unary is a prefix operator: "-", "+" or "NOT".
type Unary struct {
	At int
	Op string
	X  Expr
}

// Binary is an infix operator: comparison, arithmetic, "||", "AND", "OR",
// "IS DISTINCT FROM" and "IS NOT DISTINCT FROM".
type Binary struct {
	At   int
	Op   string
	L, R Expr
}

// Is is `X IS [NOT] NULL|TRUE|FALSE|UNKNOWN`.
type Is struct {
	At   int
	X    Expr
	Not  bool
	What string // "NULL", "TRUE", "FALSE" or "UNKNOWN"
}

// In is `X [NOT] IN (list)`.
type In struct {
	At   int
	X    Expr
	Not  bool
	List []Expr
}

// Between is `X [NOT] BETWEEN Lo AND Hi`.
type Between struct {
	At     int
	X      Expr
	Not    bool
	Lo, Hi Expr
}

// Like is `X [NOT] LIKE|ILIKE Pattern [ESCAPE Esc]`.
type Like struct {
	At      int
	X       Expr
	Not     bool
	Fold    bool // ILIKE
	Pattern Expr
	Escape  Expr // nil when absent
}

// Cast is `CAST(X AS Type)` or `X::Type`.
type Cast struct {
	At       int
	X        Expr
	TypeName string // normalized upper-case SQL type name, e.g. "BIGINT"
	Try      bool   // TRY_CAST: NULL instead of an error
}

// When is one arm of a CASE.
type When struct {
	Cond, Then Expr
}

// Case is `CASE [Operand] WHEN … THEN … [ELSE …] END`.
type Case struct {
	At      int
	Operand Expr // nil for the searched form
	Whens   []When
	Else    Expr // nil when absent
}

// Call is a function call; Name is lower-case.
type Call struct {
	At   int
	Name string
	Args []Expr
	Star bool // f(*)
}

// Index is `X[Index]` (1-based list element).
type Index struct {
	At    int
	X     Expr
	Index Expr
}

// Array is a list literal `[e1, e2, …]`.
type Array struct {
	At    int
	Elems []Expr
}

// Pos returns where the Array starts in the source.
func (e *Array) Pos() int { return e.At }

// String renders the Array as SQL.
func (e *Array) String() string { return "[" + joinExprs(e.Elems) + "]" }

// Pos returns where the Column starts in the source.
func (e *Column) Pos() int { return e.At }

// Pos returns where the Literal starts in the source.
func (e *Literal) Pos() int { return e.At }

// Pos returns where the Unary starts in the source.
func (e *Unary) Pos() int { return e.At }

// Pos returns where the Binary starts in the source.
func (e *Binary) Pos() int { return e.At }

// Pos returns where the Is starts in the source.
func (e *Is) Pos() int { return e.At }

// Pos returns where the In starts in the source.
func (e *In) Pos() int { return e.At }

// Pos returns where the Between starts in the source.
func (e *Between) Pos() int { return e.At }

// Pos returns where the Like starts in the source.
func (e *Like) Pos() int { return e.At }

// Pos returns where the Cast starts in the source.
func (e *Cast) Pos() int { return e.At }

// Pos returns where the Case starts in the source.
func (e *Case) Pos() int { return e.At }

// Pos returns where the Call starts in the source.
func (e *Call) Pos() int { return e.At }

// Pos returns where the Index starts in the source.
func (e *Index) Pos() int { return e.At }

// QuoteIdent renders name as a backtick-quoted identifier, doubling any
// backtick inside, as LanceDB does for bare projection names.
func QuoteIdent(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

func quoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func doubleQuote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// String renders the Column as SQL, keeping each name's quoting (which
// decides how it matches).
func (e *Column) String() string {
	parts := make([]string, len(e.Path))
	for i, p := range e.Path {
		switch q := e.quoteOf(i); {
		case q == '"':
			parts[i] = doubleQuote(p)
		case q == 0 && isBareName(p):
			parts[i] = p
		default:
			parts[i] = QuoteIdent(p)
		}
	}
	return strings.Join(parts, ".")
}

// isBareName reports whether s lexes as one unquoted identifier that a
// parser reads back as a column name.
func isBareName(s string) bool {
	toks, err := lex(s)
	if err != nil || len(toks) != 2 || toks[0].kind != tokIdent || toks[0].text != s {
		return false
	}
	switch strings.ToUpper(s) {
	case "NULL", "TRUE", "FALSE", "NOT", "CASE", "AND", "OR", "IS", "IN", "LIKE", "ILIKE", "BETWEEN", "ESCAPE", "AS", "FROM", "WHERE", "LIMIT":
		return false
	}
	return true
}

// String renders the Literal as SQL.
func (e *Literal) String() string {
	switch e.Kind {
	case LitNull:
		return "NULL"
	case LitBool:
		return strings.ToUpper(e.Text)
	case LitString:
		if e.DoubleQuoted {
			return doubleQuote(e.Text)
		}
		return quoteString(e.Text)
	case LitDate:
		return "DATE " + quoteString(e.Text)
	case LitTimestamp:
		return "TIMESTAMP " + quoteString(e.Text)
	}
	return e.Text
}

// String renders the Unary as SQL.
func (e *Unary) String() string {
	if e.Op == "NOT" {
		return "(NOT " + e.X.String() + ")"
	}
	return "(" + e.Op + e.X.String() + ")"
}

// String renders the Binary as SQL.
func (e *Binary) String() string {
	return "(" + e.L.String() + " " + e.Op + " " + e.R.String() + ")"
}

// String renders the Is as SQL.
func (e *Is) String() string {
	not := ""
	if e.Not {
		not = "NOT "
	}
	return "(" + e.X.String() + " IS " + not + e.What + ")"
}

func notKw(b bool) string {
	if b {
		return " NOT"
	}
	return ""
}

func joinExprs(list []Expr) string {
	parts := make([]string, len(list))
	for i, x := range list {
		parts[i] = x.String()
	}
	return strings.Join(parts, ", ")
}

// String renders the In as SQL.
func (e *In) String() string {
	return "(" + e.X.String() + notKw(e.Not) + " IN (" + joinExprs(e.List) + "))"
}

// String renders the Between as SQL.
func (e *Between) String() string {
	return "(" + e.X.String() + notKw(e.Not) + " BETWEEN " + e.Lo.String() + " AND " + e.Hi.String() + ")"
}

// String renders the Like as SQL.
func (e *Like) String() string {
	op := " LIKE "
	if e.Fold {
		op = " ILIKE "
	}
	s := "(" + e.X.String() + notKw(e.Not) + op + e.Pattern.String()
	if e.Escape != nil {
		s += " ESCAPE " + e.Escape.String()
	}
	return s + ")"
}

// String renders the Cast as SQL.
func (e *Cast) String() string {
	if e.Try {
		return "TRY_CAST(" + e.X.String() + " AS " + e.TypeName + ")"
	}
	return "CAST(" + e.X.String() + " AS " + e.TypeName + ")"
}

// String renders the Case as SQL.
func (e *Case) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	if e.Operand != nil {
		b.WriteString(" " + e.Operand.String())
	}
	for _, w := range e.Whens {
		b.WriteString(" WHEN " + w.Cond.String() + " THEN " + w.Then.String())
	}
	if e.Else != nil {
		b.WriteString(" ELSE " + e.Else.String())
	}
	b.WriteString(" END")
	return b.String()
}

// String renders the Call as SQL.
func (e *Call) String() string {
	if e.Star {
		return e.Name + "(*)"
	}
	return e.Name + "(" + joinExprs(e.Args) + ")"
}

// String renders the Index as SQL.
func (e *Index) String() string {
	return "(" + e.X.String() + ")[" + e.Index.String() + "]"
}
