package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mvd-project/mvd/sqlexpr"
)

// Kinds of view definitions LanceDB records under mv.definition.
const (
	KindSelect           = "select"
	KindNamespacedSelect = "namespaced_select"
)

// ErrUnreadable means a stored definition cannot be decoded.
var ErrUnreadable = errors.New("unreadable materialized view definition")

// ErrUnknownKind means a stored definition has a kind this version of mvd
// cannot refresh (such as LanceDB's "join"); errors.As with *KindError
// names it.
var ErrUnknownKind = errors.New("unknown materialized view kind")

// KindError reports a definition of a kind mvd does not know.
type KindError struct{ Kind string }

func (e *KindError) Error() string { return fmt.Sprintf("defined by '%s'", e.Kind) }

// Unwrap makes errors.Is(err, ErrUnknownKind) hold.
func (e *KindError) Unwrap() error { return ErrUnknownKind }

// Projection is one view column: its output name and the SQL expression
// computing it from the source, as LanceDB records it.
type Projection struct {
	Output     string `json:"output"`
	Expression string `json:"expression"`
}

// Definition is a view definition exactly as LanceDB 0.39 stores it in the
// view's schema metadata (mv.definition).
type Definition struct {
	// Kind is KindSelect (or KindNamespacedSelect, read only).
	Kind string
	// SourceTable names the source in the view's database.
	SourceTable string
	// SourceNamespace is the namespace of a namespaced_select (empty: root).
	SourceNamespace []string
	// Projections are the view columns in order. At creation an empty list
	// means every source column; a stored definition always lists them.
	Projections []Projection
	// Filter is the SQL predicate as written; "" means none.
	Filter string
	// Limit caps the rows the view holds; nil means no cap.
	Limit *uint64
	// Inputs are the source columns read, sorted and de-duplicated.
	Inputs []string
}

// storedDefinition is the JSON form; field order does not matter because
// Encode sorts keys the way serde_json's BTreeMap-backed Value does.
type storedDefinition struct {
	Kind            string       `json:"kind"`
	SourceTable     string       `json:"source_table"`
	SourceNamespace []string     `json:"source_namespace,omitempty"`
	Projections     []Projection `json:"projections"`
	Filter          *string      `json:"filter,omitempty"`
	Limit           *uint64      `json:"limit,omitempty"`
	Inputs          []string     `json:"inputs"`
}

// Encode renders d as LanceDB writes mv.definition: compact JSON with keys
// in byte order, filter and limit omitted when absent, inputs always there.
func (d *Definition) Encode() (string, error) {
	kind := d.Kind
	if kind == "" {
		kind = KindSelect
	}
	s := storedDefinition{Kind: kind, SourceTable: d.SourceTable, Projections: d.Projections, Limit: d.Limit, Inputs: d.Inputs}
	if s.Projections == nil {
		s.Projections = []Projection{}
	}
	if s.Inputs == nil {
		s.Inputs = []string{}
	}
	if kind == KindNamespacedSelect {
		s.SourceNamespace = d.SourceNamespace
	}
	if d.Filter != "" {
		f := d.Filter
		s.Filter = &f
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	// Re-marshal through a generic value: encoding/json sorts map keys,
	// which gives serde's order at every level.
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// Decode parses a stored mv.definition. Unknown keys are ignored and a
// missing inputs list is empty, as LanceDB reads it. A kind other than
// select/namespaced_select returns the decoded kind with a *KindError.
func Decode(s string) (*Definition, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &probe); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	rawKind, ok := probe["kind"]
	if !ok {
		return nil, fmt.Errorf("%w: missing kind tag", ErrUnreadable)
	}
	var kind string
	if err := json.Unmarshal(rawKind, &kind); err != nil {
		return nil, fmt.Errorf("%w: kind: %v", ErrUnreadable, err)
	}
	if kind != KindSelect && kind != KindNamespacedSelect {
		return &Definition{Kind: kind}, &KindError{Kind: kind}
	}
	var sd storedDefinition
	if err := json.Unmarshal([]byte(s), &sd); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	if _, ok := probe["source_table"]; !ok {
		return nil, fmt.Errorf("%w: missing field `source_table`", ErrUnreadable)
	}
	if _, ok := probe["projections"]; !ok {
		return nil, fmt.Errorf("%w: missing field `projections`", ErrUnreadable)
	}
	d := &Definition{Kind: sd.Kind, SourceTable: sd.SourceTable, SourceNamespace: sd.SourceNamespace,
		Projections: sd.Projections, Limit: sd.Limit, Inputs: sd.Inputs}
	if sd.Filter != nil {
		d.Filter = *sd.Filter
	}
	if d.Inputs == nil {
		d.Inputs = []string{}
	}
	return d, nil
}

// MaxLimit is the largest row cap LanceDB accepts (i64::MAX).
const MaxLimit = math.MaxInt64

// ParseSelect turns a SQL select list ("name, upper(name) AS shout,
// `order item`") into projections as LanceDB's bindings record them: a
// bare column (plain or backtick-quoted) becomes (name, "`name`"); any
// other item must be `expression AS alias` and is kept verbatim.
func ParseSelect(src string) ([]Projection, error) {
	if strings.TrimSpace(src) == "" {
		return nil, nil
	}
	list, err := sqlexpr.ParseSelectList(src)
	if err != nil {
		return nil, &selectError{err}
	}
	return FromSelectList(list)
}

// selectError is a select list that does not parse. Its text is the
// sqlexpr error's without package prefixes ("syntax error at position 4:
// …", as a filter's); it wraps ErrInvalid and the sqlexpr error.
type selectError struct{ err error }

func (e *selectError) Error() string   { return lancedbText(e.err) }
func (e *selectError) Unwrap() []error { return []error{ErrInvalid, e.err} }

// FromSelectList is ParseSelect for an already parsed list (such as a
// CREATE MATERIALIZED VIEW statement's).
func FromSelectList(list []sqlexpr.Projection) ([]Projection, error) {
	out := make([]Projection, 0, len(list))
	for _, p := range list {
		if c, ok := p.Expr.(*sqlexpr.Column); ok && len(c.Path) == 1 && p.Output == c.Path[0] && isBareName(p.SQL, c.Path[0]) {
			out = append(out, Projection{Output: p.Output, Expression: sqlexpr.QuoteIdent(p.Output)})
			continue
		}
		if p.Output == p.SQL {
			return nil, fmt.Errorf("select item %q needs a name: write %s AS name", p.SQL, p.SQL)
		}
		out = append(out, Projection{Output: p.Output, Expression: p.SQL})
	}
	return out, nil
}

// isBareName reports whether an item's text is just the column name,
// plain or backtick-quoted (not "x AS x", which is kept verbatim).
func isBareName(sql, name string) bool {
	sql = strings.TrimSpace(sql)
	return sql == name || sql == sqlexpr.QuoteIdent(name)
}

// sortedUnique sorts names byte-wise and removes duplicates.
func sortedUnique(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return slices.Compact(out)
}

// NormalizeFilter rewrites the double-quoted identifiers of a filter as
// backtick-quoted ones, as LanceDB 0.39 does before it records a view's
// filter ("kind" = 'a' is stored as `kind` = 'a'). In the filter dialect
// both spell the same column; strings and backtick names are untouched.
func NormalizeFilter(src string) string {
	var b strings.Builder
	for i := 0; i < len(src); {
		c := src[i]
		switch c {
		case '\'', '`':
			j := skipQuoted(src, i, c)
			b.WriteString(src[i:j])
			i = j
		case '"':
			j := skipQuoted(src, i, '"')
			if j > len(src) || src[j-1] != '"' || j-i < 2 {
				b.WriteString(src[i:])
				return b.String()
			}
			name := strings.ReplaceAll(src[i+1:j-1], `""`, `"`)
			b.WriteString(sqlexpr.QuoteIdent(name))
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// skipQuoted returns the index after the quoted token starting at src[i]
// (a doubled quote inside is part of it), or len(src) when unterminated.
func skipQuoted(src string, i int, q byte) int {
	for j := i + 1; j < len(src); j++ {
		if src[j] == q {
			if j+1 < len(src) && src[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(src)
}
