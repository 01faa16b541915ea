// Package plan compiles materialized view definitions: the select list,
// filter and row cap as LanceDB 0.39 records them (mv.definition), checked
// against a source schema with LanceDB's create-time validations and error
// texts, into a Plan that knows the view schema (LanceDB's types,
// nullability, carried field metadata and embedding configuration) and
// turns source batches into view batches. The same compilation serves
// `mvd table scan --select/--where` (Query).
//
// plan knows nothing of tables or commits: it depends on sqlexpr and Arrow
// only, and the operators (incremental, rebuild) and matview build on it.
package plan
