package format

// Operation is the kind of a transaction, named as the Lance protocol's
// Transaction.operation oneof names it.
type Operation string

// The operation kinds of Lance transactions.
const (
	OpAppend            Operation = "append"
	OpDelete            Operation = "delete"
	OpOverwrite         Operation = "overwrite"
	OpCreateIndex       Operation = "create_index"
	OpRewrite           Operation = "rewrite"
	OpMerge             Operation = "merge"
	OpRestore           Operation = "restore"
	OpReserveFragments  Operation = "reserve_fragments"
	OpUpdate            Operation = "update"
	OpProject           Operation = "project"
	OpUpdateConfig      Operation = "update_config"
	OpDataReplacement   Operation = "data_replacement"
	OpUpdateMemWalState Operation = "update_mem_wal_state"
	OpClone             Operation = "clone"
	OpUpdateBases       Operation = "update_bases"
	OpUnknown           Operation = "unknown"
)

// String returns the operation's protocol name.
func (o Operation) String() string { return string(o) }

// RowPreserving reports whether, after a committed operation of this kind,
// a commit that only appends rows, deletes rows by stable id or edits
// schema metadata can be rebuilt on the newer version: it keeps the schema
// and the identity of every surviving row. Everything else (overwrite,
// restore, merge and project change the schema or replace the rows;
// clone, data replacement, base changes and unknown operations are not
// understood) is a conflict.
func (o Operation) RowPreserving() bool {
	switch o {
	case OpAppend, OpDelete, OpUpdate, OpRewrite, OpReserveFragments,
		OpCreateIndex, OpUpdateConfig, OpUpdateMemWalState:
		return true
	}
	return false
}
