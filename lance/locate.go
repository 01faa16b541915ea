package lance

import (
	"cmp"
	"context"
	"slices"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/lance/internal/rowid"
)

// RowLocation is where one live row sits in a version.
type RowLocation struct {
	RowID    uint64
	Fragment *Fragment
	Offset   uint64 // physical offset within the fragment
}

// Locate finds the live rows of the snapshot whose row ids are in ids and
// returns them in scan order (fragment order, then offset), with the ids
// that are not live. It reads only row-id sequences and deletion files,
// and its cost grows with the ids asked for and the fragments' segment
// counts, not with the rows of the table. For a table without stable row
// ids, row ids are row addresses. ctx is checked between fragments.
func (s *Snapshot) Locate(ctx context.Context, ids *roaring64.Bitmap) (locs []RowLocation, missing *roaring64.Bitmap, err error) {
	t, m := s.table, s.Manifest
	remaining := ids.Clone()
	for _, f := range m.Fragments {
		if remaining.IsEmpty() {
			break
		}
		if err := s.ctxErr(ctx, "locate rows"); err != nil {
			return nil, nil, err
		}
		var found []RowLocation
		if m.StableRowIDs() {
			found, err = t.locateStable(m, f, remaining)
		} else {
			found, err = t.locateByAddress(f, remaining)
		}
		if err != nil {
			return nil, nil, err
		}
		slices.SortFunc(found, func(a, b RowLocation) int { return cmp.Compare(a.Offset, b.Offset) })
		for _, l := range found {
			remaining.Remove(l.RowID)
		}
		locs = append(locs, found...)
	}
	return locs, remaining, nil
}

// locateStable finds ids in one fragment through its row-id sequence.
// The deletion file is read only when the sequence can hold some of ids,
// so a lookup of a few rows reads the deletion files of the fragments
// holding them, not of every fragment before them.
func (t *Table) locateStable(m *Manifest, f *Fragment, ids *roaring64.Bitmap) ([]RowLocation, error) {
	seq, err := t.rowIDSequence(m, f)
	if err != nil {
		return nil, err
	}
	return t.locateInSequence(f, seq, ids)
}

// locateInSequence is locateStable with f's row-id sequence decoded.
func (t *Table) locateInSequence(f *Fragment, seq *rowid.U64Sequence, ids *roaring64.Bitmap) ([]RowLocation, error) {
	if !seq.Overlaps(ids) {
		return nil, nil
	}
	del, err := t.deletedOffsets(f)
	if err != nil {
		return nil, err
	}
	var found []RowLocation
	seq.FindEach(ids, func(id, off uint64) {
		if !del.Contains(uint32(off)) { // a deleted copy; the live one is elsewhere, if anywhere
			found = append(found, RowLocation{RowID: id, Fragment: f, Offset: off})
		}
	})
	return found, nil
}

// locateByAddress finds row addresses in one fragment.
func (t *Table) locateByAddress(f *Fragment, ids *roaring64.Bitmap) ([]RowLocation, error) {
	lo, hi := RowAddr(f.ID, 0), RowAddr(f.ID, f.PhysicalRows)
	it := ids.Iterator()
	it.AdvanceIfNeeded(lo)
	var del interface{ Contains(uint32) bool }
	var found []RowLocation
	for it.HasNext() {
		id := it.Next()
		if id >= hi {
			break
		}
		if del == nil {
			bm, err := t.deletedOffsets(f)
			if err != nil {
				return nil, err
			}
			del = bm
		}
		off := id - lo
		if !del.Contains(uint32(off)) {
			found = append(found, RowLocation{RowID: id, Fragment: f, Offset: off})
		}
	}
	return found, nil
}
