package rowid

import (
	"sort"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// VersionSequence gives each physical row of a fragment a table version
// (when it was created, or last updated), as runs laid end to end. It is
// immutable.
type VersionSequence struct {
	ends     []uint64 // ends[i] = rows covered by runs[0..i]
	versions []uint64
}

// DecodeVersionSequence decodes a serialized RowDatasetVersionSequence.
// Only the length of each run's span matters (lance-format.md §2.2).
func DecodeVersionSequence(b []byte) (*VersionSequence, error) {
	var pb tablepb.RowDatasetVersionSequence
	if err := unmarshal(b, &pb); err != nil {
		return nil, corruptf("version sequence: %v", err)
	}
	vs := &VersionSequence{}
	var total uint64
	for i, run := range pb.GetRuns() {
		if run.GetSpan() == nil {
			return nil, corruptf("version run %d has no span", i)
		}
		s, err := decodeSegment(run.GetSpan())
		if err != nil {
			return nil, wrapf(err, "version run %d", i)
		}
		n := s.len()
		if n == 0 {
			continue
		}
		if total+n < total {
			return nil, corruptf("version sequence length overflows")
		}
		total += n
		vs.ends = append(vs.ends, total)
		vs.versions = append(vs.versions, run.GetVersion())
	}
	return vs, nil
}

// Len returns the number of rows covered.
func (vs *VersionSequence) Len() uint64 {
	if len(vs.ends) == 0 {
		return 0
	}
	return vs.ends[len(vs.ends)-1]
}

// At returns the version of row i < Len().
func (vs *VersionSequence) At(i uint64) uint64 {
	k := sort.Search(len(vs.ends), func(k int) bool { return vs.ends[k] > i })
	return vs.versions[k]
}

// Runs calls fn for each run of rows [lo, hi) sharing one version.
func (vs *VersionSequence) Runs(fn func(lo, hi, version uint64)) {
	var lo uint64
	for k, end := range vs.ends {
		fn(lo, end, vs.versions[k])
		lo = end
	}
}

// DefaultVersion is what LanceDB reports for the created and last-updated
// versions of a row whose fragment records none.
const DefaultVersion = 1

// Cursor reads a version sequence at non-decreasing positions in
// amortized constant time; over a nil sequence every row is at
// DefaultVersion.
type Cursor struct {
	vs *VersionSequence
	k  int
}

// NewCursor returns a cursor at the start of vs (which may be nil).
func NewCursor(vs *VersionSequence) *Cursor { return &Cursor{vs: vs} }

// At returns the version of row i; successive calls must not decrease i.
func (c *Cursor) At(i uint64) uint64 {
	if c.vs == nil {
		return DefaultVersion
	}
	for c.vs.ends[c.k] <= i {
		c.k++
	}
	return c.vs.versions[c.k]
}

// VersionAt returns the version of row i of vs, DefaultVersion when vs is
// nil.
func VersionAt(vs *VersionSequence, i uint64) uint64 {
	if vs == nil {
		return DefaultVersion
	}
	return vs.At(i)
}
