package lance

import (
	"context"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

// startFromEndIDs bounds the reads that look for their first fragment
// from the newest one back (firstHolding): the reads of a few rows, which
// the rows of a small commit are.
const startFromEndIDs = 1 << 12

// firstHolding returns the index of the first fragment of snap that holds
// a live row of ids (want of them), looking from the last fragment back
// and stopping once want live rows are found: the rows a commit added or
// rewrote sit in its new fragments, at the end, so a refresh's read of
// them no longer walks the fragments before (a source LanceDB commits to
// one row at a time holds thousands; issue 22). A live row id lives in one
// fragment only, so the fragments before the index hold none of them. If
// fewer than want are live it has looked at every fragment and the index
// is still the first that holds one (len(Fragments) when none does).
func (snap *Snapshot) firstHolding(ctx context.Context, ids *roaring64.Bitmap, want uint64) (int, error) {
	t, m := snap.table, snap.Manifest
	first := len(m.Fragments)
	var found uint64
	for i := len(m.Fragments) - 1; i >= 0 && found < want; i-- {
		if err := snap.ctxErr(ctx, "read rows"); err != nil {
			return 0, err
		}
		locs, err := t.locateStable(m, m.Fragments[i], ids)
		if err != nil {
			return 0, err
		}
		if len(locs) > 0 {
			first, found = i, found+uint64(len(locs))
		}
	}
	return first, nil
}
