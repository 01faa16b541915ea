package lance

import (
	"context"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

// RowIDs returns the row ids of every live row of the version (stable row
// ids, or row addresses without them), from row metadata alone: whole row
// id segments are added as ranges, so a fragment of consecutive ids costs
// a few words, not a visit per row as ScanRowMeta's.
func (s *Snapshot) RowIDs(ctx context.Context) (*roaring64.Bitmap, error) {
	ids := roaring64.New()
	for _, f := range s.Fragments {
		fr, err := s.FragmentRows(ctx, f)
		if err != nil {
			return nil, err
		}
		// Live offsets come in runs between deleted ones.
		add := func(lo, hi uint64) {
			if lo >= hi {
				return
			}
			if fr.rowIDs != nil {
				fr.rowIDs.AddRange(ids, lo, hi)
			} else {
				ids.AddRange(RowAddr(f.ID, lo), RowAddr(f.ID, hi))
			}
		}
		lo := uint64(0)
		it := fr.Deleted.Iterator()
		for it.HasNext() {
			d := uint64(it.Next())
			if d >= f.PhysicalRows {
				break
			}
			add(lo, d)
			lo = d + 1
		}
		add(lo, f.PhysicalRows)
	}
	return ids, nil
}
