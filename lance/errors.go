package lance

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error returned by this package wraps at most one of
// them, so callers can branch with errors.Is.
var (
	// ErrNotATable means the path is not the root of a Lance table.
	ErrNotATable = errors.New("not a Lance table")
	// ErrVersionNotFound means the requested table version does not exist.
	ErrVersionNotFound = errors.New("version not found")
	// ErrCorrupt means a file of the table cannot be decoded.
	ErrCorrupt = errors.New("corrupt")
	// ErrUnsupported means the table uses a feature this reader does not
	// implement; mvd refuses rather than guessing.
	ErrUnsupported = errors.New("unsupported")
	// ErrNoStableRowIDs means the table was written without stable row ids,
	// so rows have no identity across versions.
	ErrNoStableRowIDs = errors.New("table has no stable row ids")
	// ErrConflict means a commit lost to a concurrent, incompatible commit;
	// errors.As with *ConflictError says which version won.
	ErrConflict = errors.New("commit conflict")
	// ErrCommitUncertain means the new version was published but making it
	// durable failed: it is visible now and may not survive a crash.
	ErrCommitUncertain = errors.New("commit published but not known durable")
	// ErrEmptyCommit means a commit was asked to change nothing.
	ErrEmptyCommit = errors.New("nothing to commit")
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
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// unsupportedf returns an error wrapping ErrUnsupported.
func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}
