package control

import (
	"errors"
	"fmt"

	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/sqlexpr"
)

// StatementError is a statement that failed while it ran: Err at byte
// offset Pos of the statement (the name or option it concerns). It
// unwraps to Err, so errors.Is(err, matview.ErrConflict) and the exit
// status Err chooses (ExitCode) hold through it.
type StatementError struct {
	// Pos is the 0-based byte offset in the statement.
	Pos int
	// Err is the failure.
	Err error
}

// Error is Err's text with the position.
func (e *StatementError) Error() string {
	return fmt.Sprintf("%v (at position %d)", e.Err, e.Pos)
}

// Unwrap returns Err.
func (e *StatementError) Unwrap() error { return e.Err }

// at gives err the position pos.
func at(pos int, err error) error {
	if err == nil {
		return nil
	}
	return &StatementError{Pos: pos, Err: err}
}

// invalidAt is an ErrInvalid refusal at pos.
func invalidAt(pos int, format string, args ...any) error {
	return &StatementError{Pos: pos, Err: &matview.Error{Kind: matview.ErrInvalid, Msg: fmt.Sprintf(format, args...)}}
}

// sqlError is a parse error as a matview.ErrInvalid error whose text
// names the position ("SQL syntax error at position N: …").
func sqlError(err error) error {
	var pe *sqlexpr.PosError
	msg := err.Error()
	if errors.As(err, &pe) {
		if errors.Is(pe.Kind, sqlexpr.ErrSyntax) {
			msg = fmt.Sprintf("SQL syntax error at position %d: %s", pe.Pos, pe.Msg)
		} else {
			msg = fmt.Sprintf("SQL at position %d: %s", pe.Pos, pe.Msg)
		}
	}
	return &matview.Error{Kind: matview.ErrInvalid, Msg: msg, Err: err}
}

// ExitCode is the status `mvd sql` exits with for err, and the "code" of
// its JSON failure line: 0 for nil, what an error with an ExitCode method
// chooses (3 for a lost conflict), else 1.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		if c := ec.ExitCode(); c > 0 && c < 126 {
			return c
		}
	}
	return 1
}
