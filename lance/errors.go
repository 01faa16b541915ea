package lance

import (
	"errors"
	"fmt"

	"github.com/mvd-project/mvd/lance/internal/format"
)

// Sentinel errors, the same values in every layer (the data file reader
// and writer wrap them too): every error returned by this package, by
// lance/datafile and by lance/datawriter wraps at most one of them, so
// callers branch with errors.Is.
var (
	// ErrNotATable means the path is not the root of a Lance table.
	ErrNotATable = format.ErrNotATable
	// ErrVersionNotFound means the requested table version does not exist.
	ErrVersionNotFound = format.ErrVersionNotFound
	// ErrCorrupt means a file of the table cannot be decoded.
	ErrCorrupt = format.ErrCorrupt
	// ErrUnsupported means the table uses a feature this reader does not
	// implement; mvd refuses rather than guessing.
	ErrUnsupported = format.ErrUnsupported
	// ErrNoStableRowIDs means the table was written without stable row ids,
	// so rows have no identity across versions.
	ErrNoStableRowIDs = format.ErrNoStableRowIDs
	// ErrConflict means a commit lost to a concurrent, incompatible commit;
	// errors.As with *ConflictError says which version won.
	ErrConflict = format.ErrConflict
	// ErrCommitUncertain means the new version was published but making it
	// durable failed: it is visible now and may not survive a crash.
	ErrCommitUncertain = format.ErrCommitUncertain
	// ErrEmptyCommit means a commit was asked to change nothing.
	ErrEmptyCommit = format.ErrEmptyCommit
	// ErrSchemaMismatch means records handed to a writer do not match the
	// table schema.
	ErrSchemaMismatch = format.ErrSchemaMismatch
	// ErrStaleHead means a Head is not the latest version: a newer one
	// exists past a gap that a cleanup left (Latest returns it).
	ErrStaleHead = errors.New("a newer version exists past a gap")
)

// Error describes a failure to read or interpret part of a table. It names
// the table, the version (when known) and what was found.
type Error struct {
	Table   string // table root
	Version uint64 // 0 when not tied to one version
	Op      string // what was being done, e.g. "read manifest"
	Err     error  // wraps one of the sentinels above, or an I/O error
}

func (e *Error) Error() string {
	if e.Version != 0 {
		return fmt.Sprintf("%s: %s (version %d): %v", e.Table, e.Op, e.Version, e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", e.Table, e.Op, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// corruptf returns an error wrapping ErrCorrupt.
func corruptf(f string, args ...any) error { return format.Corruptf(f, args...) }

// unsupportedf returns an error wrapping ErrUnsupported.
func unsupportedf(f string, args ...any) error { return format.Unsupportedf(f, args...) }
