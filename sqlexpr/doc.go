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
// Use:
//
//	e, err := sqlexpr.Parse("amount * 100")     // or CompileSQL(src, schema)
//	c, err := sqlexpr.Compile(e, schema)         // types, nullability, inputs
//	arr, err := c.EvalWith(mem, batch)           // one value per row
//	f, err := sqlexpr.CompileFilter("kind = 'purchase'", schema)
//	kept, err := f.Filter(mem, batch)            // rows where TRUE
//	st, err := sqlexpr.ParseStatement("REFRESH MATERIALIZED VIEW v")
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
// offset in the source.
package sqlexpr
