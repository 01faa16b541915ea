// Package rowid decodes and encodes the per-fragment row identity
// metadata of a Lance table: stable row-id sequences (RowIdSequence, a
// list of U64Segments) and row version sequences (created-at and
// last-updated-at runs). It is internal: package lance exposes rows through
// Snapshot.FragmentRows and RowMeta, never these encodings.
package rowid

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/mvd-project/mvd/lance/internal/format"
)

var (
	// ErrCorrupt and ErrUnsupported are the shared sentinels.
	ErrCorrupt     = format.ErrCorrupt
	ErrUnsupported = format.ErrUnsupported
)

func corruptf(f string, args ...any) error     { return format.Corruptf(f, args...) }
func unsupportedf(f string, args ...any) error { return format.Unsupportedf(f, args...) }

func wrapf(err error, f string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(f, args...), err)
}

// unmarshal decodes a protobuf message, keeping unknown fields.
func unmarshal(b []byte, m proto.Message) error {
	return proto.UnmarshalOptions{DiscardUnknown: false}.Unmarshal(b, m)
}
