package datawriter

import (
	"errors"
	"fmt"
)

var (
	// ErrSchemaMismatch means the record batches do not match the table
	// schema exactly (LanceDB cannot scan a file whose types differ).
	ErrSchemaMismatch = errors.New("records do not match the table schema")
	// ErrUnsupported means a type or size this writer cannot encode yet.
	ErrUnsupported = errors.New("unsupported by the data file writer")
)

// errChunkLevels marks a mini-block chunk whose rep/def levels overflow
// the chunk's counters or size; a smaller page avoids it.
var errChunkLevels = errors.New("too many levels for one mini-block chunk")

func mismatchf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSchemaMismatch, fmt.Sprintf(format, args...))
}

func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}
