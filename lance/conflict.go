package lance

import "fmt"

// ConflictError is returned when a commit cannot be rebased over a version
// committed concurrently. It unwraps to ErrConflict.
type ConflictError struct {
	// ReadVersion is the version the losing commit was planned against.
	ReadVersion uint64
	// Version is the concurrently committed version that won.
	Version uint64
	// Operation is the winning transaction's operation (OpUnknown when it
	// recorded none).
	Operation Operation
	// Reason says why the two commits are incompatible.
	Reason string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%v: version %d (%s) won over a commit read at version %d: %s",
		ErrConflict, e.Version, e.Operation, e.ReadVersion, e.Reason)
}

// Unwrap makes errors.Is(err, ErrConflict) hold.
func (e *ConflictError) Unwrap() error { return ErrConflict }
