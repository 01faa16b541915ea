package plan

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/sqlexpr"
)

// SourceRowID is the view column holding the stable row id of the source
// row each view row came from (UInt64, not null, last).
const SourceRowID = "__source_row_id"

// RowID is the stable row id column of a scan; a view may not use the name.
const RowID = "_rowid"

// ErrInvalid means a definition cannot be planned against the source
// schema: an unknown column, a syntax or type error, a volatile function, a
// duplicate or reserved output name, a limit out of range. The error text
// is LanceDB's.
var ErrInvalid = errors.New("invalid view definition")

// invalidf builds an error wrapping ErrInvalid whose text is exactly msg.
func invalidf(format string, args ...any) error {
	return &invalidError{msg: fmt.Sprintf(format, args...)}
}

type invalidError struct{ msg string }

func (e *invalidError) Error() string { return e.msg }
func (e *invalidError) Unwrap() error { return ErrInvalid }

// EmptyFilterError is LanceDB 0.39's error for a filter that is empty or
// only whitespace (a where given with nothing in it), which it refuses.
func EmptyFilterError(filter string) error {
	return invalidf("Invalid input, invalid view filter: Invalid user input: Error parsing statement: SELECT 1 FROM t WHERE %s (sql parser error: Expected: an expression, found: EOF)", filter)
}

// Plan is a definition compiled against one source schema: the view schema
// it produces, the source columns it reads and the operators that turn
// source batches into view batches. It is immutable and safe for
// concurrent use.
type Plan struct {
	def    Definition // projections expanded, inputs derived
	source *arrow.Schema
	filter *sqlexpr.Compiled
	// conjuncts are the filter's AND-ed terms, for Select; nil: the
	// filter is evaluated whole.
	conjuncts []conjunct
	projs     []*sqlexpr.Compiled
	schema    *arrow.Schema // view schema, __source_row_id last, with carried metadata
	columns   []string      // top-level source columns to read
	direct    map[string][]string
}

// Compile plans def against the source schema, with LanceDB 0.39's
// create-time validations in LanceDB's order and texts. Omitted
// projections expand to every source column (skipping __source_row_id, so
// a view over a view does not copy the upstream provenance).
func Compile(def Definition, source *arrow.Schema) (*Plan, error) {
	p := &Plan{def: def, source: source, direct: map[string][]string{}}
	if def.Limit != nil && *def.Limit > MaxLimit {
		return nil, invalidf("view limit %d exceeds the maximum of %d", *def.Limit, uint64(MaxLimit))
	}
	if len(def.Projections) == 0 {
		p.def.Projections = nil
		for _, f := range source.Fields() {
			if f.Name == SourceRowID {
				continue
			}
			p.def.Projections = append(p.def.Projections, Projection{Output: f.Name, Expression: sqlexpr.QuoteIdent(f.Name)})
		}
	}
	var inputs []string
	seen := map[string]bool{}
	fields := make([]arrow.Field, 0, len(p.def.Projections)+1)
	for _, pr := range p.def.Projections {
		if seen[pr.Output] {
			return nil, invalidf("Column '%s' already exists", pr.Output)
		}
		seen[pr.Output] = true
		if pr.Output == SourceRowID || pr.Output == RowID {
			return nil, invalidf("view column name '%s' is reserved", pr.Output)
		}
		c, err := compileProjection(pr.Expression, source)
		if err != nil {
			return nil, invalidf("Invalid expression for column '%s': %s", pr.Output, lancedbText(err))
		}
		p.projs = append(p.projs, c)
		inputs = append(inputs, c.Inputs()...)
		f := arrow.Field{Name: pr.Output, Type: c.OutputType(), Nullable: c.ViewNullable()}
		if leaf, ok := directField(c, source); ok {
			f.Metadata = stripMetadata(leaf.Metadata)
			f.Type = stripType(f.Type)
			if name, top := c.IsColumn(); top {
				p.direct[name] = append(p.direct[name], pr.Output)
			}
		}
		fields = append(fields, f)
	}
	if def.Filter != "" && strings.TrimSpace(def.Filter) == "" {
		return nil, EmptyFilterError(def.Filter)
	}
	if def.Filter != "" {
		c, err := compileFilter(def.Filter, source)
		if err != nil {
			var te *filterTypeError
			if errors.As(err, &te) {
				return nil, invalidf("Invalid input, invalid view filter: view filter must be a boolean predicate, not %s", te.got)
			}
			return nil, invalidf("Invalid input, invalid view filter: %s", lancedbText(err))
		}
		p.filter = c
		if e, err := sqlexpr.ParseFilter(def.Filter); err == nil {
			p.conjuncts = splitFilter(e, source)
		}
		inputs = append(inputs, c.Inputs()...)
	}
	p.def.Inputs = sortedUnique(inputs)
	if p.def.Inputs == nil {
		p.def.Inputs = []string{}
	}
	need := map[string]bool{}
	for _, in := range p.def.Inputs {
		need[rootOf(source, in)] = true
	}
	p.columns = []string{}
	for _, f := range source.Fields() {
		if need[f.Name] {
			p.columns = append(p.columns, f.Name)
		}
	}
	fields = append(fields, arrow.Field{Name: SourceRowID, Type: arrow.PrimitiveTypes.Uint64})
	md := arrow.MetadataFrom(viewMetadata(source.Metadata(), p.direct, fields))
	p.schema = arrow.NewSchema(fields, &md)
	return p, nil
}

// Definition returns the definition as it is stored: projections expanded
// and inputs derived.
func (p *Plan) Definition() Definition { return p.def }

// Schema is the view schema: one field per projection (LanceDB's types,
// nullability and carried field metadata), then __source_row_id; its
// schema metadata holds what LanceDB carries over from the source
// (embedding_functions), not the mv.* keys.
func (p *Plan) Schema() *arrow.Schema { return p.schema }

// Columns are the top-level source columns the plan reads, in source
// schema order (possibly none).
func (p *Plan) Columns() []string { return p.columns }

// Limit returns the row cap and whether there is one.
func (p *Plan) Limit() (uint64, bool) {
	if p.def.Limit == nil {
		return 0, false
	}
	return *p.def.Limit, true
}

// rootOf maps an input path to its top-level column ("st.a" reads "st"; a
// column whose own name holds a dot is taken whole).
func rootOf(schema *arrow.Schema, in string) string {
	if schema.HasField(in) {
		return in
	}
	root, _, _ := strings.Cut(in, ".")
	return root
}

// directField returns the source field a projection reads directly (a
// bare column or a chain of struct field accesses), whose metadata the
// view column keeps.
func directField(c *sqlexpr.Compiled, source *arrow.Schema) (arrow.Field, bool) {
	if name, ok := c.IsColumn(); ok {
		return source.Field(source.FieldIndices(name)[0]), true
	}
	col, ok := c.Expr().(*sqlexpr.Column)
	if !ok || len(col.Path) < 2 {
		return arrow.Field{}, false
	}
	idx := source.FieldIndices(col.Path[0])
	if len(idx) == 0 {
		return arrow.Field{}, false
	}
	f := source.Field(idx[0])
	for _, name := range col.Path[1:] {
		st, ok := f.Type.(*arrow.StructType)
		if !ok {
			return arrow.Field{}, false
		}
		i, ok := st.FieldIdx(name)
		if !ok {
			return arrow.Field{}, false
		}
		f = st.Field(i)
	}
	return f, true
}

// compileProjection and compileFilter are the one place plan calls
// sqlexpr, because projections and filters read double quotes differently
// in LanceDB 0.39 (a string in a projection, a column in a filter).
func compileProjection(src string, schema *arrow.Schema) (*sqlexpr.Compiled, error) {
	if e, err := sqlexpr.ParseProjection(src); err == nil {
		if name, _, bad := findVolatile(e); bad {
			return nil, fmt.Errorf("function '%s' is not immutable and would evaluate differently across refreshes", name)
		}
	}
	return sqlexpr.CompileProjection(src, schema)
}

type filterTypeError struct{ got string }

func (e *filterTypeError) Error() string {
	return "view filter must be a boolean predicate, not " + e.got
}

func compileFilter(src string, schema *arrow.Schema) (*sqlexpr.Compiled, error) {
	e, err := sqlexpr.ParseFilter(src)
	if err != nil {
		return nil, err
	}
	if name, _, bad := findVolatile(e); bad {
		return nil, fmt.Errorf("function '%s' is not immutable and would evaluate differently across refreshes", name)
	}
	c, err := sqlexpr.CompileFilterExpr(e, schema)
	if err != nil {
		// Say which type a non-boolean filter has, in LanceDB's words.
		if errors.Is(err, sqlexpr.ErrType) {
			if pe, perr := sqlexpr.ParseProjection(src); perr == nil {
				if pc, cerr := sqlexpr.Compile(pe, schema); cerr == nil && pc.OutputType().ID() != arrow.BOOL && pc.OutputType().ID() != arrow.NULL {
					return nil, &filterTypeError{got: lancedbTypeName(pc.OutputType())}
				}
			}
		}
		return nil, err
	}
	return c, nil
}

// lancedbText renders an sqlexpr error without Go-package prefixes.
func lancedbText(err error) string {
	var pe *sqlexpr.PosError
	if errors.As(err, &pe) {
		switch {
		case errors.Is(pe.Kind, sqlexpr.ErrSyntax):
			return fmt.Sprintf("syntax error at position %d: %s", pe.Pos, pe.Msg)
		default:
			return pe.Msg
		}
	}
	return strings.TrimPrefix(err.Error(), "sqlexpr: ")
}

// lancedbTypeName spells an Arrow type as DataFusion's Display does.
func lancedbTypeName(t arrow.DataType) string {
	switch t.ID() {
	case arrow.INT8:
		return "Int8"
	case arrow.INT16:
		return "Int16"
	case arrow.INT32:
		return "Int32"
	case arrow.INT64:
		return "Int64"
	case arrow.UINT8:
		return "UInt8"
	case arrow.UINT16:
		return "UInt16"
	case arrow.UINT32:
		return "UInt32"
	case arrow.UINT64:
		return "UInt64"
	case arrow.FLOAT32:
		return "Float32"
	case arrow.FLOAT64:
		return "Float64"
	case arrow.STRING:
		return "Utf8"
	case arrow.LARGE_STRING:
		return "LargeUtf8"
	case arrow.BINARY:
		return "Binary"
	case arrow.DATE32:
		return "Date32"
	}
	return t.String()
}

// findVolatile finds a call of a function whose value changes between
// evaluations, which LanceDB refuses before simplifying the expression.
func findVolatile(e sqlexpr.Expr) (string, int, bool) {
	var name string
	var at int
	found := false
	var walk func(e sqlexpr.Expr)
	walk = func(e sqlexpr.Expr) {
		if e == nil || found {
			return
		}
		switch x := e.(type) {
		case *sqlexpr.Call:
			if isVolatile(x.Name) {
				name, at, found = x.Name, x.At, true
				return
			}
			for _, a := range x.Args {
				walk(a)
			}
		case *sqlexpr.Unary:
			walk(x.X)
		case *sqlexpr.Binary:
			walk(x.L)
			walk(x.R)
		case *sqlexpr.Is:
			walk(x.X)
		case *sqlexpr.In:
			walk(x.X)
			for _, a := range x.List {
				walk(a)
			}
		case *sqlexpr.Between:
			walk(x.X)
			walk(x.Lo)
			walk(x.Hi)
		case *sqlexpr.Like:
			walk(x.X)
			walk(x.Pattern)
			walk(x.Escape)
		case *sqlexpr.Cast:
			walk(x.X)
		case *sqlexpr.Case:
			walk(x.Operand)
			for _, w := range x.Whens {
				walk(w.Cond)
				walk(w.Then)
			}
			walk(x.Else)
		case *sqlexpr.Index:
			walk(x.X)
			walk(x.Index)
		}
	}
	walk(e)
	return name, at, found
}

func isVolatile(name string) bool {
	switch name {
	case "random", "now", "current_date", "current_time", "current_timestamp", "uuid",
		"version", "arrow_typeof", "arrow_field", "arrow_metadata", "localtime", "localtimestamp":
		return true
	}
	return false
}
