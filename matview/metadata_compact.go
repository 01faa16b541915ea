package matview

import (
	"fmt"
	"math"
	"strconv"
)

// The view metadata keys of a view's compaction policy (beside the
// auto-refresh policy keys; refreshes preserve them).
const (
	// KeyCompactFragments is CompactPolicy.SmallFragments (decimal).
	KeyCompactFragments = "mv.compact_small_fragments"
	// KeyCompactDeletedPercent is CompactPolicy.DeletedPercent (decimal).
	KeyCompactDeletedPercent = "mv.compact_deleted_percent"
)

// Defaults of CompactPolicy, chosen by measurement (bench/README.md,
// "Compaction"): a refresh's cost grows with the view's fragment count
// (its manifest is read and written whole), and at 64 small fragments it
// is still within a few percent of a compacted view's, while a
// compaction step of that many one-row fragments costs about as much as
// one refresh; LanceDB's optimize() rewrites a fragment once 10% of its
// rows are deleted, and so does mvd.
const (
	DefaultCompactSmallFragments = 16
	DefaultCompactDeletedPercent = 10.0
)

// CompactPolicy is when the daemon compacts a view: when it has more than
// SmallFragments small fragments, or more than DeletedPercent percent of
// its rows deleted. Stored per view in its metadata; a key the view does
// not set takes the daemon's default.
type CompactPolicy struct {
	// SmallFragments is the count of small fragments (fewer rows than
	// CompactOptions.SmallRows) a view may have before it is compacted;
	// a negative value never compacts for it.
	SmallFragments int
	// DeletedPercent is the share of deleted rows, in percent of the
	// rows stored, a view may have before the fragments holding them are
	// rewritten; a negative value never compacts for it.
	DeletedPercent float64
}

// DefaultCompactPolicy is the policy of a view and a daemon that set none.
func DefaultCompactPolicy() CompactPolicy {
	return CompactPolicy{SmallFragments: DefaultCompactSmallFragments, DeletedPercent: DefaultCompactDeletedPercent}
}

// Validate refuses a policy that cannot be stored and read back.
func (p CompactPolicy) Validate() error {
	if math.IsNaN(p.DeletedPercent) || math.IsInf(p.DeletedPercent, 0) || p.DeletedPercent > 100 {
		return fmt.Errorf("compaction deleted percent %v: want a number up to 100 (negative: off)", p.DeletedPercent)
	}
	return nil
}

// CompactPolicyFromMetadata reads a view's compaction policy from its
// metadata; keys the view does not set come from defaults.
func CompactPolicyFromMetadata(md map[string]string, defaults CompactPolicy) (CompactPolicy, error) {
	p := defaults
	if s := md[KeyCompactFragments]; s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return CompactPolicy{}, fmt.Errorf("%s: %q is not an integer", KeyCompactFragments, s)
		}
		p.SmallFragments = n
	}
	if s := md[KeyCompactDeletedPercent]; s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return CompactPolicy{}, fmt.Errorf("%s: %q is not a number", KeyCompactDeletedPercent, s)
		}
		p.DeletedPercent = f
	}
	if err := p.Validate(); err != nil {
		return CompactPolicy{}, err
	}
	return p, nil
}

// Metadata returns the metadata keys that store p.
func (p CompactPolicy) Metadata() map[string]string {
	return map[string]string{
		KeyCompactFragments:      strconv.Itoa(p.SmallFragments),
		KeyCompactDeletedPercent: strconv.FormatFloat(p.DeletedPercent, 'f', -1, 64),
	}
}
