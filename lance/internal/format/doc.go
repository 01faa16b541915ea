// Package format is the base every layer of package lance sits on: the
// Lance schema tree (built once from the flattened field list, with one set
// of checks) and its Arrow mapping, the data file format version, the
// transaction operation kinds and the error sentinels. The table layer
// (package lance), the data file reader (lance/datafile) and the writer
// (lance/datawriter) all use it, and none of them imports another for
// these; package lance re-exports what callers name (lance.Schema,
// lance.Field, lance.ErrCorrupt, ...).
//
// Dependencies: format <- datafile, datawriter <- lance.
package format
