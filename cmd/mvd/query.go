package main

import (
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/plan"
)

// query is the --select / --where part of `mvd table scan`: a thin caller
// of plan.Query, which compiles them as a view's definition is compiled.
type query struct {
	q       *plan.Query
	schema  *arrow.Schema // of the output batches
	columns []string      // the table columns to scan
}

// newQuery compiles selectSQL (may be empty: all columns) and whereSQL
// (may be empty: all rows) against the table schema.
func newQuery(table *arrow.Schema, selectSQL, whereSQL string, meta bool) (*query, error) {
	q, err := plan.CompileQuery(table, selectSQL, whereSQL, meta)
	if err != nil {
		var qe *plan.QueryError
		if errors.As(err, &qe) {
			return nil, usagef("%v", err)
		}
		return nil, err
	}
	return &query{q: q, schema: q.Schema(), columns: q.Columns()}, nil
}

// apply filters and projects one scanned batch. The caller releases the
// result, which may have no rows.
func (q *query) apply(mem memory.Allocator, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	return q.q.Apply(mem, rec)
}
