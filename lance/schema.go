package lance

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/lance/internal/format"
)

// Field is one node of a table schema (see format.Field): id, parent id,
// name, Lance logical type, nullability, metadata and children.
type Field = format.Field

// Schema is a table schema: top-level fields and schema metadata. It is
// immutable once built and safe to share.
type Schema = format.Schema

// FileVersion is a data file format version: "2.0", "2.1" or "2.2".
type FileVersion = format.FileVersion

// The data file versions mvd reads and writes.
const (
	V2_0               = format.V2_0
	V2_1               = format.V2_1
	V2_2               = format.V2_2
	DefaultFileVersion = format.DefaultFileVersion
	// Legacy is Lance file format 0.1, read but not written.
	Legacy = format.Legacy
)

// Operation is the kind of a transaction ("append", "delete", "update",
// ...), as the Lance protocol names it.
type Operation = format.Operation

// The transaction operations.
const (
	OpAppend           = format.OpAppend
	OpDelete           = format.OpDelete
	OpOverwrite        = format.OpOverwrite
	OpCreateIndex      = format.OpCreateIndex
	OpRewrite          = format.OpRewrite
	OpMerge            = format.OpMerge
	OpRestore          = format.OpRestore
	OpReserveFragments = format.OpReserveFragments
	OpUpdate           = format.OpUpdate
	OpProject          = format.OpProject
	OpUpdateConfig     = format.OpUpdateConfig
	OpUnknown          = format.OpUnknown
)

// NewSchemaFromArrow converts an Arrow schema to a Lance schema, assigning
// field ids depth first (parent before children) from 0, as Lance does at
// table creation. Schema and field metadata are kept.
func NewSchemaFromArrow(as *arrow.Schema) (*Schema, error) { return format.NewSchemaFromArrow(as) }

// ParseFileVersion checks a data file version string ("" means not given).
func ParseFileVersion(s string) (FileVersion, error) { return format.ParseFileVersion(s) }
