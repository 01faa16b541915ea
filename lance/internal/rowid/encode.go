package rowid

import (
	"encoding/binary"

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

// EncodeRowIDs serializes the RowIdSequence of ids in the order given (a
// compaction's live rows): runs of consecutive ids as ranges, everything
// between them as arrays.
func EncodeRowIDs(ids []uint64) ([]byte, error) {
	const minRun = 8 // shorter runs cost less as array entries
	seq := &tablepb.RowIdSequence{}
	var loose []uint64
	flush := func() {
		if len(loose) == 0 {
			return
		}
		seq.Segments = append(seq.Segments, arraySegment(loose))
		loose = nil
	}
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[j-1]+1 {
			j++
		}
		if j-i >= minRun {
			flush()
			seq.Segments = append(seq.Segments, rangeSegment(ids[i], ids[j-1]+1))
		} else {
			loose = append(loose, ids[i:j]...)
		}
		i = j
	}
	flush()
	return proto.Marshal(seq)
}

// arraySegment is the U64Segment listing vals: sorted when they strictly
// increase, as u32 offsets from their minimum when those fit.
func arraySegment(vals []uint64) *tablepb.U64Segment {
	lo, hi, sorted := vals[0], vals[0], true
	for i, v := range vals {
		lo, hi = min(lo, v), max(hi, v)
		if i > 0 && v <= vals[i-1] {
			sorted = false
		}
	}
	arr := &tablepb.EncodedU64Array{}
	if hi-lo <= uint64(^uint32(0)) {
		b := make([]byte, 4*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint32(b[4*i:], uint32(v-lo))
		}
		arr.Array = &tablepb.EncodedU64Array_U32Array_{U32Array: &tablepb.EncodedU64Array_U32Array{Base: lo, Offsets: b}}
	} else {
		b := make([]byte, 8*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint64(b[8*i:], v)
		}
		arr.Array = &tablepb.EncodedU64Array_U64Array_{U64Array: &tablepb.EncodedU64Array_U64Array{Values: b}}
	}
	if sorted {
		return &tablepb.U64Segment{Segment: &tablepb.U64Segment_SortedArray{SortedArray: arr}}
	}
	return &tablepb.U64Segment{Segment: &tablepb.U64Segment_Array{Array: arr}}
}

// EncodeVersions serializes the RowDatasetVersionSequence of vers, one
// version per row, as runs of equal versions.
func EncodeVersions(vers []uint64) ([]byte, error) {
	seq := &tablepb.RowDatasetVersionSequence{}
	for i := 0; i < len(vers); {
		j := i + 1
		for j < len(vers) && vers[j] == vers[i] {
			j++
		}
		seq.Runs = append(seq.Runs, &tablepb.RowDatasetVersionRun{Span: rangeSegment(uint64(i), uint64(j)), Version: vers[i]})
		i = j
	}
	return proto.Marshal(seq)
}
