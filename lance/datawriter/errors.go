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

func mismatchf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSchemaMismatch, fmt.Sprintf(format, args...))
}

func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}
