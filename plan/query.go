package plan

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/sqlexpr"
)

// RowMetaColumns are the row metadata columns a scan can add, in order.
var RowMetaColumns = []string{"_rowid", "_rowaddr", "_row_created_at_version", "_row_last_updated_at_version"}

// Query is an ad-hoc select list and filter over a table (`mvd table scan
// --select/--where`): the same compilation a view gets, with output types
// and nullability a view would have, optionally followed by the scan's row
// metadata columns. It is immutable and safe for concurrent use.
type Query struct {
	filter  *sqlexpr.Compiled
	projs   []*sqlexpr.Compiled // nil: every scanned column
	names   []string
	schema  *arrow.Schema
	columns []string // nil: every column
	meta    bool
}

// QueryError says which part of a query is wrong ("--select", "--where").
type QueryError struct {
	Part string
	Err  error
}

func (e *QueryError) Error() string { return e.Part + ": " + e.Err.Error() }
func (e *QueryError) Unwrap() error { return e.Err }

// CompileQuery compiles selectSQL (may be empty: all columns) and whereSQL
// (may be empty: all rows) against a table schema. With rowMeta the four
// row metadata columns follow the projections, and output names they
// would duplicate are refused, as are duplicate names and _rowid (as a
// view refuses them).
func CompileQuery(table *arrow.Schema, selectSQL, whereSQL string, rowMeta bool) (*Query, error) {
	q := &Query{meta: rowMeta}
	var inputs []string
	if whereSQL != "" {
		f, err := compileQueryWhere(table, whereSQL, rowMeta)
		if err != nil {
			return nil, err
		}
		q.filter = f
		inputs = append(inputs, f.Inputs()...)
	}
	var out []arrow.Field
	reserved := map[string]string{RowID: "reserved"}
	if rowMeta {
		for _, n := range RowMetaColumns {
			reserved[n] = "reserved by --with-row-ids"
		}
	}
	if selectSQL != "" {
		list, err := sqlexpr.ParseSelectList(selectSQL)
		if err != nil {
			return nil, &QueryError{"--select", err}
		}
		seen := map[string]bool{}
		for _, p := range list {
			if why, ok := reserved[p.Output]; ok {
				return nil, &QueryError{"--select", fmt.Errorf("column name %q is %s; choose another alias", p.Output, why)}
			}
			if seen[p.Output] {
				return nil, &QueryError{"--select", fmt.Errorf("two columns are named %q; give one an alias with AS", p.Output)}
			}
			seen[p.Output] = true
			c, err := sqlexpr.Compile(p.Expr, table)
			if err != nil {
				return nil, &QueryError{"--select " + p.SQL, err}
			}
			f := arrow.Field{Name: p.Output, Type: c.OutputType(), Nullable: c.ViewNullable()}
			if leaf, ok := directField(c, table); ok {
				if _, top := c.IsColumn(); top {
					f.Metadata = leaf.Metadata
				}
			}
			q.projs = append(q.projs, c)
			q.names = append(q.names, p.Output)
			out = append(out, f)
			inputs = append(inputs, c.Inputs()...)
		}
		need := map[string]bool{}
		for _, in := range inputs {
			need[rootOf(table, in)] = true
		}
		q.columns = []string{} // row count only, unless something is read
		for _, f := range table.Fields() {
			if need[f.Name] {
				q.columns = append(q.columns, f.Name)
			}
		}
	} else {
		out = append(out, table.Fields()...)
		if rowMeta {
			for _, f := range table.Fields() {
				if _, ok := reserved[f.Name]; ok {
					return nil, &QueryError{"--with-row-ids", fmt.Errorf("the table has a column named %q; select it under another name", f.Name)}
				}
			}
		}
	}
	if rowMeta {
		for _, name := range RowMetaColumns {
			out = append(out, arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Uint64, Nullable: true})
		}
	}
	md := table.Metadata()
	q.schema = arrow.NewSchema(out, &md)
	return q, nil
}

// compileQueryWhere compiles a query's --where; with rowMeta the batches
// carry _rowid, so the filter may read it, as in LanceDB's
// query().where().
func compileQueryWhere(table *arrow.Schema, whereSQL string, rowMeta bool) (*sqlexpr.Compiled, error) {
	compileWhere := sqlexpr.CompileFilter
	if rowMeta {
		compileWhere = sqlexpr.CompileFilterWithRowIDs
	}
	f, err := compileWhere(whereSQL, table)
	if err != nil {
		if !rowMeta && (strings.Contains(err.Error(), "'"+sqlexpr.RowIDColumn+"'") || strings.Contains(err.Error(), "'"+sqlexpr.RowAddrColumn+"'")) {
			return nil, &QueryError{"--where", fmt.Errorf("%w (add --with-row-ids to filter on row ids)", err)}
		}
		return nil, &QueryError{"--where", err}
	}
	return f, nil
}

// Schema is the schema of the batches Apply returns.
func (q *Query) Schema() *arrow.Schema { return q.schema }

// Columns are the table columns to scan; nil means every column.
func (q *Query) Columns() []string { return q.columns }

// Apply filters and projects one scanned batch (which carries the row
// metadata columns when the query asked for them). The caller releases
// the result, which may have no rows.
func (q *Query) Apply(mem memory.Allocator, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if q.filter != nil {
		filtered, err := q.filter.Filter(mem, rec)
		if err != nil {
			return nil, &QueryError{"--where", err}
		}
		rec = filtered
	} else {
		rec.Retain()
	}
	defer rec.Release()
	if q.projs == nil {
		rec.Retain()
		return rec, nil
	}
	cols := make([]arrow.Array, 0, q.schema.NumFields())
	defer func() { releaseAll(cols) }()
	for i, p := range q.projs {
		a, err := p.EvalWith(mem, rec)
		if err != nil {
			name := q.names[i]
			if len(name) > 80 { // an unaliased column is named by its SQL
				name = strings.ToValidUTF8(name[:77], "") + "…"
			}
			return nil, &QueryError{fmt.Sprintf("--select column %q", name), err}
		}
		cols = append(cols, a)
	}
	if q.meta {
		for _, name := range RowMetaColumns {
			c := rec.Column(rec.Schema().FieldIndices(name)[0])
			c.Retain()
			cols = append(cols, c)
		}
	}
	return array.NewRecordBatch(q.schema, cols, rec.NumRows()), nil
}
