package format

import (
	"errors"
	"fmt"
)

// Sentinel errors, shared by every layer: an error from the table layer,
// the data file reader or the writer wraps at most one of them, so callers
// branch with errors.Is whichever layer failed. Package lance re-exports
// them.
var (
	// ErrNotATable means the path is not the root of a Lance table.
	ErrNotATable = errors.New("not a Lance table")
	// ErrVersionNotFound means the requested table version does not exist.
	ErrVersionNotFound = errors.New("version not found")
	// ErrCorrupt means a file of the table cannot be decoded.
	ErrCorrupt = errors.New("corrupt")
	// ErrUnsupported means the table or file uses a feature this
	// implementation does not read or write; mvd refuses rather than
	// guessing.
	ErrUnsupported = errors.New("unsupported")
	// ErrNoStableRowIDs means the table was written without stable row
	// ids, so rows have no identity across versions.
	ErrNoStableRowIDs = errors.New("table has no stable row ids")
	// ErrConflict means a commit lost to a concurrent, incompatible commit.
	ErrConflict = errors.New("commit conflict")
	// ErrCommitUncertain means the new version was published but making
	// it durable failed: it is visible now and may not survive a crash.
	ErrCommitUncertain = errors.New("commit published but not known durable")
	// ErrEmptyCommit means a commit was asked to change nothing.
	ErrEmptyCommit = errors.New("nothing to commit")
	// ErrSchemaMismatch means records handed to a writer do not match the
	// table schema.
	ErrSchemaMismatch = errors.New("records do not match the table schema")
)

// Corruptf returns an error wrapping ErrCorrupt: "corrupt: <message>".
func Corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// Unsupportedf returns an error wrapping ErrUnsupported:
// "unsupported: <message>".
func Unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

// Mark returns err, unchanged in its message, made to satisfy
// errors.Is(_, sentinel) as well. Decoders use it to classify errors at
// their boundary without rewording them.
func Mark(err, sentinel error) error {
	if err == nil || errors.Is(err, sentinel) {
		return err
	}
	return &marked{err: err, sentinel: sentinel}
}

type marked struct {
	err, sentinel error
}

func (m *marked) Error() string   { return m.err.Error() }
func (m *marked) Unwrap() []error { return []error{m.err, m.sentinel} }
