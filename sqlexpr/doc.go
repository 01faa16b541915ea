// Package sqlexpr parses, type-checks and evaluates the SQL expressions
// that define a materialized view: projections such as `upper(name)` and
// filters such as `kind = 'purchase' AND amount > 10`, plus the view DDL
// statements (CREATE/REFRESH/DROP/SHOW MATERIALIZED VIEW).
//
// The goal is LanceDB 0.39 compatibility: where LanceDB accepts an
// expression, the output type, nullability, `inputs` and every value
// (NULLs included) match what LanceDB computes; the differential tests
// check this against LanceDB itself. Where LanceDB refuses standard SQL
// (CASE, SUBSTR, TRIM, CEIL, FLOOR, EXTRACT, IS DISTINCT FROM,
// CAST AS VARCHAR) sqlexpr accepts it with standard semantics; the full
// list of deliberate differences is in extensions.go.
//
// LanceDB reads double quotes differently in projections ("x" is the
// string 'x') and filters ("x" is the column x), so there is one entry
// point per dialect, and a parsed tree cannot be compiled as the other:
//
//	e, err := sqlexpr.ParseProjection("amount * 100") // or CompileProjection(src, schema)
//	c, err := sqlexpr.Compile(e, schema)              // types, nullability, inputs
//	arr, err := c.EvalWith(mem, batch)                // one value per row
//	f, err := sqlexpr.CompileFilter(`"kind" = 'purchase'`, schema)
//	kept, err := f.Filter(mem, batch)                 // rows where TRUE
//	st, err := sqlexpr.ParseStatement("REFRESH MATERIALIZED VIEW v")
//
// A query filter that may read row ids (_rowid) compiles with
// CompileFilterWithRowIDs; a view's filter cannot, as in LanceDB.
//
// Evaluation follows SQL three-valued logic. Common shapes (column
// references, comparisons, arithmetic and widening casts on primitive
// columns, IN lists, LIKE with a constant pattern, boolean connectives,
// IS [NOT] NULL) run vectorized over Arrow arrays; everything else runs
// row by row through a program compiled with expr-lang/expr. Both paths
// give identical results (the tests run every case both ways).
//
// Errors wrap ErrSyntax, ErrUnknownColumn, ErrType, ErrUnsupported or
// ErrEval; parse and type errors are *PosError values carrying the byte
// position (byte offset) in the source. Every error is one line, and quotes at most a few
// hundred bytes of the input.
package sqlexpr
