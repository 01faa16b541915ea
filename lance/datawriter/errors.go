package datawriter

import (
	"errors"
	"fmt"

	"github.com/mvd-project/mvd/lance/internal/format"
)

// The writer's sentinels are the shared ones (lance.ErrSchemaMismatch and
// lance.ErrUnsupported are the same values).
var (
	// ErrSchemaMismatch means the record batches do not match the table
	// schema exactly (LanceDB cannot scan a file whose types differ).
	ErrSchemaMismatch = format.ErrSchemaMismatch
	// ErrUnsupported means a type or size this writer cannot encode yet.
	ErrUnsupported = format.ErrUnsupported
)

// errChunkLevels marks a mini-block chunk whose rep/def levels overflow
// the chunk's counters or size; a smaller page avoids it.
var errChunkLevels = errors.New("too many levels for one mini-block chunk")

func mismatchf(f string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSchemaMismatch, fmt.Sprintf(f, args...))
}

func unsupportedf(f string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(f, args...))
}
