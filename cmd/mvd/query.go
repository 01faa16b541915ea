package main

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/sqlexpr"
)

// query is the --select / --where part of `mvd table scan`: a filter and
// projections compiled against the table schema, applied batch by batch.
// Its output columns have the types and nullability a view would get.
type query struct {
	filter  *sqlexpr.Compiled
	projs   []*sqlexpr.Compiled // nil: every scanned column
	schema  *arrow.Schema       // of the output batches
	columns []string            // the table columns to scan
	meta    bool
}

// newQuery compiles selectSQL (may be empty: all columns) and whereSQL
// (may be empty: all rows) against the table schema.
func newQuery(table *arrow.Schema, selectSQL, whereSQL string, meta bool) (*query, error) {
	q := &query{meta: meta}
	need := map[string]bool{}
	if whereSQL != "" {
		compileWhere := sqlexpr.CompileFilter
		if meta {
			// The batches carry _rowid: the filter may read it, as in
			// LanceDB's query().where().
			compileWhere = sqlexpr.CompileFilterWithRowIDs
		}
		f, err := compileWhere(whereSQL, table)
		if err != nil {
			if !meta && (strings.Contains(err.Error(), "'"+sqlexpr.RowIDColumn+"'") || strings.Contains(err.Error(), "'"+sqlexpr.RowAddrColumn+"'")) {
				return nil, usagef("--where: %v (add --with-row-ids to filter on row ids)", err)
			}
			return nil, usagef("--where: %v", err)
		}
		q.filter = f
		addRoots(need, table, f.Inputs())
	}
	var out []arrow.Field
	if selectSQL != "" {
		list, err := sqlexpr.ParseSelectList(selectSQL)
		if err != nil {
			return nil, usagef("--select: %v", err)
		}
		seen := map[string]bool{}
		for _, p := range list {
			c, err := sqlexpr.Compile(p.Expr, table)
			if err != nil {
				return nil, usagef("--select %s: %v", p.SQL, err)
			}
			if seen[p.Output] {
				return nil, usagef("--select: two columns are named %q; give one an alias with AS", p.Output)
			}
			seen[p.Output] = true
			f := arrow.Field{Name: p.Output, Type: c.OutputType(), Nullable: c.ViewNullable()}
			if name, ok := c.IsColumn(); ok {
				f.Metadata = table.Field(table.FieldIndices(name)[0]).Metadata
			}
			q.projs = append(q.projs, c)
			out = append(out, f)
			addRoots(need, table, c.Inputs())
		}
		for _, f := range table.Fields() {
			if need[f.Name] {
				q.columns = append(q.columns, f.Name)
			}
		}
		if q.columns == nil {
			q.columns = []string{} // row count only
		}
	} else {
		out = append(out, table.Fields()...)
	}
	if meta {
		for _, name := range []string{lance.ColRowID, lance.ColRowAddr, lance.ColCreatedAt, lance.ColLastUpdatedAt} {
			out = append(out, arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Uint64, Nullable: true})
		}
	}
	md := table.Metadata()
	q.schema = arrow.NewSchema(out, &md)
	return q, nil
}

// addRoots adds the top-level columns of input paths ("st.a" reads "st";
// a column whose own name holds a dot is taken whole).
func addRoots(need map[string]bool, table *arrow.Schema, inputs []string) {
	for _, in := range inputs {
		if table.HasField(in) {
			need[in] = true
			continue
		}
		root, _, _ := strings.Cut(in, ".")
		need[root] = true
	}
}

// apply filters and projects one scanned batch. The caller releases the
// result, which may have no rows.
func (q *query) apply(mem memory.Allocator, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if q.filter != nil {
		filtered, err := q.filter.Filter(mem, rec)
		if err != nil {
			return nil, fmt.Errorf("--where: %w", err)
		}
		rec = filtered
		defer rec.Release()
	} else {
		rec.Retain()
		defer rec.Release()
	}
	if q.projs == nil {
		rec.Retain()
		return rec, nil
	}
	cols := make([]arrow.Array, 0, q.schema.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for i, p := range q.projs {
		a, err := p.EvalWith(mem, rec)
		if err != nil {
			name := q.schema.Field(i).Name
			if len(name) > 80 { // an unaliased column is named by its SQL
				name = strings.ToValidUTF8(name[:77], "") + "…"
			}
			return nil, fmt.Errorf("--select column %q: %w", name, err)
		}
		cols = append(cols, a)
	}
	if q.meta {
		for _, name := range []string{lance.ColRowID, lance.ColRowAddr, lance.ColCreatedAt, lance.ColLastUpdatedAt} {
			c := rec.Column(rec.Schema().FieldIndices(name)[0])
			c.Retain()
			cols = append(cols, c)
		}
	}
	return array.NewRecordBatch(q.schema, cols, rec.NumRows()), nil
}
