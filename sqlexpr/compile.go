package sqlexpr

import (
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Compiled is an expression type-checked against a schema and ready to
// evaluate. It is immutable and safe for concurrent use.
type Compiled struct {
	src    Expr
	schema *arrow.Schema
	root   *node
	inputs []string
	// parsedInputs are the columns the source text names, before
	// simplification.
	parsedInputs []string
	// usedCols are the schema indices of the top-level columns read.
	usedCols []int
	prog     *program
}

// OutputType is the Arrow type of the expression's values.
func (c *Compiled) OutputType() arrow.DataType { return c.root.typ }

// Nullable reports whether the expression can yield NULL, as DataFusion
// derives it. A view stores computed columns as nullable regardless (see
// lancedb-mv-semantics.md §3.5); use IsColumn to tell identity columns.
func (c *Compiled) Nullable() bool { return c.root.nullable }

// Inputs lists the source columns the expression reads: dotted paths for
// nested fields, sorted byte-wise and de-duplicated. As in LanceDB, a
// projection's inputs are taken after simplification (`id IS NULL` over a
// NOT NULL id reads nothing) and a filter's (CompileFilter) before.
func (c *Compiled) Inputs() []string { return append([]string{}, c.inputs...) }

// IsColumn reports whether the expression is a bare top-level column
// reference, and which: LanceDB keeps such columns' nullability and
// field metadata in the view schema.
func (c *Compiled) IsColumn() (string, bool) {
	if c.root.kind == kCol && len(c.root.path) == 0 {
		return c.schema.Field(c.root.col).Name, true
	}
	return "", false
}

// ViewNullable is the nullability of the expression as a view column in
// LanceDB 0.39: a bare source column keeps its own, anything computed is
// nullable (lancedb-mv-semantics.md §3.5).
func (c *Compiled) ViewNullable() bool {
	if _, ok := c.IsColumn(); ok {
		return c.root.nullable
	}
	return true
}

// Expr returns the parsed expression (for a filter, after Lance's
// rewrite of regexp_match into a boolean, see filterBooleans).
func (c *Compiled) Expr() Expr { return c.src }

// Compile type-checks e, a projection (from Parse, ParseProjection or a
// statement's select list), against schema. A tree from ParseFilter that
// reads double quotes as names is refused: use CompileFilterExpr.
func Compile(e Expr, schema *arrow.Schema) (*Compiled, error) {
	if err := checkDialect(e, false); err != nil {
		return nil, err
	}
	return compile(e, schema, false)
}

// compile is Compile, optionally without vectorized kernels.
func compile(e Expr, schema *arrow.Schema, rowOnly bool) (*Compiled, error) {
	if e == nil || schema == nil {
		return nil, fmt.Errorf("%w: nil expression or schema", ErrType)
	}
	ck := &checker{schema: schema, inputs: map[string]bool{}}
	root, err := ck.checkRule(e, true)
	if err != nil {
		return nil, err
	}
	if err := checkWide(root, e.Pos()); err != nil {
		return nil, err
	}
	if root.kind == kCol && root.dict {
		// A bare dictionary column is itself, encoding included.
		root.typ, root.dict = schema.Field(root.col).Type, false
	}
	// Inputs come from the simplified expression (what LanceDB does for
	// projections); CompileFilter replaces them with the parsed ones.
	seen := map[string]bool{}
	used := map[int]bool{}
	collectInputs(root, seen, used)
	inputs := sortedKeys(seen)
	usedCols := make([]int, 0, len(used))
	for i := range used {
		usedCols = append(usedCols, i)
	}
	sort.Ints(usedCols)
	prog, err := buildProgram(root, rowOnly)
	if err != nil {
		return nil, err
	}
	return &Compiled{src: e, schema: schema, root: root, inputs: inputs, parsedInputs: sortedKeys(ck.inputs), usedCols: usedCols, prog: prog}, nil
}

func collectInputs(n *node, seen map[string]bool, used map[int]bool) {
	if n.kind == kCol {
		// LanceDB records a projection's nested reference by at most two
		// levels (`nest.c.d` reads as "nest.c"); filters keep full paths.
		parts := n.refParts
		if len(parts) > 2 {
			parts = parts[:2]
		}
		seen[strings.Join(parts, ".")] = true
		used[n.col] = true
	}
	for _, a := range n.args {
		collectInputs(a, seen, used)
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CompileProjection parses src as a projection (ParseProjection: "x" is
// the string 'x') and compiles it. A source text that is not a valid
// expression over schema but is exactly the name of one of its fields
// refers to that field, as LanceDB accepts for names such as `order item`
// written without backticks.
func CompileProjection(src string, schema *arrow.Schema) (*Compiled, error) {
	return compileText(src, schema, false)
}

// CompileSQL is CompileProjection.
func CompileSQL(src string, schema *arrow.Schema) (*Compiled, error) {
	return CompileProjection(src, schema)
}

// CompileFilter parses src as a filter (ParseFilter: "x" is the column x),
// compiles it and checks that it is boolean.
func CompileFilter(src string, schema *arrow.Schema) (*Compiled, error) {
	c, err := compileText(src, schema, true)
	if err != nil {
		return nil, err
	}
	return asFilter(c)
}

// CompileFilterExpr is CompileFilter for an expression parsed with
// ParseFilter, such as CreateView.Filter. A tree from ParseProjection
// holding a double-quoted string is refused.
func CompileFilterExpr(e Expr, schema *arrow.Schema) (*Compiled, error) {
	if err := checkDialect(e, true); err != nil {
		return nil, err
	}
	c, err := compile(filterBooleans(e), schema, false)
	if err != nil {
		return nil, err
	}
	return asFilter(c)
}

func compileText(src string, schema *arrow.Schema, filter bool) (*Compiled, error) {
	e, err := parseExpr(src, filter)
	var c *Compiled
	if err == nil {
		if filter {
			e = filterBooleans(e)
		}
		c, err = compile(e, schema, false)
	}
	if err != nil && schema != nil {
		if idx := schema.FieldIndices(src); len(idx) == 1 {
			return compile(&Column{Path: []string{src}}, schema, false)
		}
	}
	return c, err
}

// asFilter checks that c is boolean and switches it to filter inputs.
func asFilter(c *Compiled) (*Compiled, error) {
	if t := c.OutputType(); t.ID() != arrow.BOOL {
		return nil, errAt(ErrType, 0, "filter must be boolean, got %s", t)
	}
	// LanceDB takes a filter's inputs from the parsed filter, before
	// simplification (lancedb-mv-semantics.md §3.3).
	c.inputs = c.parsedInputs
	return c, nil
}

// RowIDColumn is the name under which a LanceDB query's filter reads row
// ids: the stable row id on tables with stable row ids, the row address
// otherwise.
const RowIDColumn = "_rowid"

// RowAddrColumn is the name under which a LanceDB query's filter reads
// row addresses (fragment id << 32 | offset).
const RowAddrColumn = "_rowaddr"

// CompileFilterWithRowIDs is CompileFilter for a query that can supply
// row ids, as LanceDB's query().where() can: the filter may also read
// _rowid and _rowaddr (UInt64, never NULL). Batches it evaluates must then
// carry those columns (ReadsRowIDs says whether it reads one). A view's
// filter cannot use them (LanceDB refuses it with "unknown column
// '_rowid'"): compile view filters with CompileFilter against the source
// schema, which refuses them the same way.
func CompileFilterWithRowIDs(src string, schema *arrow.Schema) (*Compiled, error) {
	return CompileFilter(src, withRowIDs(schema))
}

// withRowIDs is schema with _rowid and _rowaddr columns where it has none.
func withRowIDs(schema *arrow.Schema) *arrow.Schema {
	if schema == nil {
		return nil
	}
	fields := schema.Fields()
	for _, name := range []string{RowIDColumn, RowAddrColumn} {
		if !schema.HasField(name) {
			fields = append(fields, arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Uint64})
		}
	}
	md := schema.Metadata()
	return arrow.NewSchema(fields, &md)
}

// ReadsRowIDs reports whether the expression reads _rowid or _rowaddr.
func (c *Compiled) ReadsRowIDs() bool {
	for _, i := range c.usedCols {
		if name := c.schema.Field(i).Name; name == RowIDColumn || name == RowAddrColumn {
			return true
		}
	}
	return false
}
