package sqlexpr

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors; every error returned by this package wraps one of them
// so callers can branch with errors.Is.
var (
	// ErrSyntax reports text that is not a valid expression or statement.
	ErrSyntax = errors.New("sqlexpr: syntax error")
	// ErrUnknownColumn reports a reference to a column the schema lacks.
	ErrUnknownColumn = errors.New("sqlexpr: unknown column")
	// ErrType reports operands or arguments of the wrong type, or a
	// filter that is not boolean.
	ErrType = errors.New("sqlexpr: type error")
	// ErrUnsupported reports valid SQL that sqlexpr refuses, such as
	// volatile functions, aggregates or unknown functions.
	ErrUnsupported = errors.New("sqlexpr: unsupported")
	// ErrEval reports a failure while evaluating rows, such as an integer
	// division by zero or an invalid cast.
	ErrEval = errors.New("sqlexpr: evaluation error")
)

// PosError is an error at a position (a 0-based byte offset) of the
// source text.
type PosError struct {
	// Kind is the sentinel the error wraps.
	Kind error
	// Pos is the 0-based byte offset in the source.
	Pos int
	// Msg says what went wrong, or what was expected.
	Msg string
}

// Error implements error. It is one line, and echoes at most
// maxErrEcho bytes of the message (which may quote the input).
func (e *PosError) Error() string {
	return fmt.Sprintf("%v at position %d: %s", e.Kind, e.Pos, oneLine(stripKinds(e.Msg)))
}

// maxErrEcho bounds how much of a message an error prints: a 4,000-branch
// CASE must not produce a 200 KB error.
const maxErrEcho = 240

// oneLine makes s printable on one line of bounded length: line breaks
// and other control characters are escaped, and a long text is cut (at a
// character boundary) with "…" and the number of bytes left out.
func oneLine(s string) string {
	var b strings.Builder
	for i, r := range s {
		if b.Len() >= maxErrEcho {
			fmt.Fprintf(&b, "… (%d more bytes)", len(s)-i)
			break
		}
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// stripKinds removes the sentinel prefixes ("sqlexpr: type error: ")
// that wrapped errors repeat at the start of their text.
func stripKinds(msg string) string {
	for again := true; again; {
		again = false
		for _, kind := range []error{ErrSyntax, ErrUnknownColumn, ErrType, ErrUnsupported, ErrEval} {
			if rest, ok := strings.CutPrefix(msg, kind.Error()+": "); ok {
				msg, again = rest, true
			}
		}
	}
	return msg
}

// Unwrap lets errors.Is find the sentinel.
func (e *PosError) Unwrap() error { return e.Kind }

// withPos gives err the position pos unless it already has one.
func withPos(err error, pos int) error {
	var pe *PosError
	if errors.As(err, &pe) {
		return err
	}
	for _, kind := range []error{ErrSyntax, ErrUnknownColumn, ErrType, ErrUnsupported, ErrEval} {
		if errors.Is(err, kind) {
			return &PosError{Kind: kind, Pos: pos, Msg: stripKinds(err.Error())}
		}
	}
	return &PosError{Kind: ErrType, Pos: pos, Msg: stripKinds(err.Error())}
}

func errAt(kind error, pos int, format string, args ...any) error {
	return &PosError{Kind: kind, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}
