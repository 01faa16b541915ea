package matview

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error of this package wraps one of them (and, where
// a lower layer failed, that layer's error too), so callers branch with
// errors.Is.
var (
	// ErrConflict means a concurrent commit on the view (another refresh,
	// in this process or another, or LanceDB's own) won; nothing was
	// written. errors.As with *ConflictError names the winning version.
	ErrConflict = errors.New("conflict with a concurrent refresh")
	// ErrNotAView means the table exists but carries no view definition.
	ErrNotAView = errors.New("not a materialized view")
	// ErrNotFound means a view, table, column or version does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists means the name is taken.
	ErrExists = errors.New("already exists")
	// ErrUnsupported means a request mvd does not serve: a remote database,
	// a view kind it cannot refresh, a table feature it cannot write.
	ErrUnsupported = errors.New("unsupported")
	// ErrInvalid means bad input: a definition LanceDB would refuse, a bad
	// name, a source without stable row ids, a definition that no longer
	// matches the view.
	ErrInvalid = errors.New("invalid")
	// ErrStorage means the storage failed under a valid request: a write,
	// sync, rename or commit that did not go through (disk full, an I/O
	// error, a failed background sync: vfs.ErrNotDurable). Retrying may
	// succeed once the condition clears; the input was not at fault.
	ErrStorage = errors.New("storage failure")
)

// Error is an error of this package: Msg is the one line shown to people
// (LanceDB's text where LanceDB has one), Kind the sentinel, Err the cause.
type Error struct {
	Kind error
	Msg  string
	Err  error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the sentinel and the cause.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}

func errorf(kind error, cause error, format string, args ...any) error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...), Err: cause}
}

// ConflictError reports a refresh that lost to a concurrent commit on the
// view. It unwraps to ErrConflict.
type ConflictError struct {
	View string
	// ReadVersion is the view version the refresh planned on.
	ReadVersion uint64
	// Version is the view version that won.
	Version uint64
	// Operation is the winning commit's operation, when known.
	Operation string
	Err       error
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("refresh of view '%s' lost to a concurrent commit: view version %d was committed first (planned on version %d); nothing was written",
		e.View, e.Version, e.ReadVersion)
}

// Unwrap makes errors.Is(err, ErrConflict) hold.
func (e *ConflictError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrConflict, e.Err}
	}
	return []error{ErrConflict}
}

// ExitCode is the command-line status of a conflict (3).
func (e *ConflictError) ExitCode() int { return 3 }
