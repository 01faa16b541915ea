package rowid

import (
	"google.golang.org/protobuf/proto"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// rangeSegment is the U64Segment of start..end (exclusive).
func rangeSegment(start, end uint64) *tablepb.U64Segment {
	return &tablepb.U64Segment{Segment: &tablepb.U64Segment_Range_{Range: &tablepb.U64Segment_Range{Start: start, End: end}}}
}

// EncodeRowIDRange serializes the RowIdSequence of n fresh ids from start,
// as Lance writes for appended rows.
func EncodeRowIDRange(start, n uint64) ([]byte, error) {
	return proto.Marshal(&tablepb.RowIdSequence{Segments: []*tablepb.U64Segment{rangeSegment(start, start+n)}})
}

// EncodeVersionRun serializes a RowDatasetVersionSequence giving all n rows
// the same version. Only the span's length matters to readers.
func EncodeVersionRun(n, version uint64) ([]byte, error) {
	return proto.Marshal(&tablepb.RowDatasetVersionSequence{Runs: []*tablepb.RowDatasetVersionRun{{Span: rangeSegment(0, n), Version: version}}})
}
