package lance

import (
	"errors"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"google.golang.org/protobuf/proto"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
	"github.com/mvd-project/mvd/lance/internal/rowid"
)

// RewriteGroup is one group of a compaction (Commit.Rewrite): the live
// rows of the base version's fragments Old, in the base version's
// fragment order and then physical order, written again as the fragments
// New, in the same order. The new fragments take the rows' stable row ids
// and created-at and last-updated-at versions, so no reader of row ids
// (a change set, a provenance index, an index) sees any row change; they
// take the place of the first old fragment of the group.
type RewriteGroup struct {
	// Old are fragment ids of the base version, consecutive in its
	// fragment order.
	Old []uint64
	// New hold exactly the live rows of Old; their PhysicalRows add up
	// to those rows.
	New []NewFragment
}

// errRewriteStale is a rewrite whose old fragments changed since it was
// planned.
var errRewriteStale = fmt.Errorf("%w: the fragments it rewrites changed", ErrConflict)

// rewriteRows gathers the identity of the live rows of fragments ids of m,
// in order: row ids and both version sequences.
type rewriteRows struct{ ids, created, updated []uint64 }

func (t *Table) rewriteRowsOf(m *Manifest, frags []*Fragment) (*rewriteRows, error) {
	r := &rewriteRows{}
	for _, f := range frags {
		fr, err := t.fragmentRows(m, f)
		if err != nil {
			return nil, err
		}
		if fr.rowIDs == nil {
			return nil, fmt.Errorf("rewrite: %w: %s", ErrNoStableRowIDs, noStableRowIDsHint)
		}
		if err := fr.Each(func(_ uint64, rm RowMeta) error {
			r.ids = append(r.ids, rm.RowID)
			r.created = append(r.created, rm.CreatedAt)
			r.updated = append(r.updated, rm.LastUpdatedAt)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// buildRewrite replaces each group's old fragments in m (the manifest
// being built from base) with its new ones, which take the next fragment
// ids; it returns the transaction's groups.
func (t *Table) buildRewrite(base *Manifest, m *tablepb.Manifest, groups []RewriteGroup) ([]*tablepb.Transaction_Rewrite_RewriteGroup, error) {
	if !base.StableRowIDs() {
		return nil, fmt.Errorf("rewrite: %w: %s", ErrNoStableRowIDs, noStableRowIDsHint)
	}
	indexed, all := (&Snapshot{Manifest: base}).IndexedFragments()
	pos := make(map[uint64]int, len(base.Fragments))
	for i, f := range base.Fragments {
		pos[f.ID] = i
	}
	nextFrag := uint64(0)
	if m.MaxFragmentId != nil {
		nextFrag = uint64(m.GetMaxFragmentId()) + 1
	}
	replace := map[uint64][]*tablepb.DataFragment{} // first old id -> new fragments
	drop := map[uint64]bool{}
	var out []*tablepb.Transaction_Rewrite_RewriteGroup
	for gi, g := range groups {
		old, err := groupFragments(base, pos, g.Old)
		if err != nil {
			return nil, fmt.Errorf("rewrite group %d: %w", gi, err)
		}
		for _, f := range old {
			if all || indexed.Contains(uint32(f.ID)) {
				return nil, unsupportedf("rewrite group %d: fragment %d is covered by an index (its coverage would name a fragment that is gone)", gi, f.ID)
			}
		}
		rows, err := t.rewriteRowsOf(base, old)
		if err != nil {
			return nil, fmt.Errorf("rewrite group %d: %w", gi, err)
		}
		var total uint64
		for _, nf := range g.New {
			total += nf.PhysicalRows
		}
		if total != uint64(len(rows.ids)) {
			return nil, fmt.Errorf("rewrite group %d: %w: new fragments hold %d rows, the old ones %d live rows", gi, errRewriteStale, total, len(rows.ids))
		}
		pg := &tablepb.Transaction_Rewrite_RewriteGroup{}
		for _, f := range old {
			pg.OldFragments = append(pg.OldFragments, f.pb)
			drop[f.ID] = true
		}
		var at uint64
		for _, nf := range g.New {
			if nextFrag > uint64(^uint32(0)) {
				return nil, unsupportedf("fragment id %d exceeds the u32 max_fragment_id", nextFrag)
			}
			f, err := rewrittenFragment(nextFrag, nf, rows, at)
			if err != nil {
				return nil, err
			}
			at += nf.PhysicalRows
			id32 := uint32(nextFrag)
			m.MaxFragmentId = &id32
			nextFrag++
			pg.NewFragments = append(pg.NewFragments, f)
		}
		replace[old[0].ID] = pg.NewFragments
		out = append(out, pg)
	}
	kept := make([]*tablepb.DataFragment, 0, len(m.Fragments))
	for _, f := range m.Fragments {
		if nf, ok := replace[f.GetId()]; ok {
			kept = append(kept, nf...)
		}
		if !drop[f.GetId()] {
			kept = append(kept, f)
		}
	}
	m.Fragments = kept
	return out, nil
}

// groupFragments returns the fragments of base named by ids, which must
// be present, distinct and consecutive in base's order.
func groupFragments(base *Manifest, pos map[uint64]int, ids []uint64) ([]*Fragment, error) {
	if len(ids) == 0 {
		return nil, errors.New("no old fragments")
	}
	out := make([]*Fragment, 0, len(ids))
	for i, id := range ids {
		p, ok := pos[id]
		if !ok {
			return nil, fmt.Errorf("%w: fragment %d is not in version %d", errRewriteStale, id, base.Version)
		}
		if i > 0 && p != pos[ids[i-1]]+1 {
			return nil, fmt.Errorf("fragment %d does not follow fragment %d in version %d", id, ids[i-1], base.Version)
		}
		out = append(out, base.Fragments[p])
	}
	return out, nil
}

// rewrittenFragment is the manifest entry of new fragment nf with id id,
// holding rows[at : at+nf.PhysicalRows].
func rewrittenFragment(id uint64, nf NewFragment, rows *rewriteRows, at uint64) (*tablepb.DataFragment, error) {
	end := at + nf.PhysicalRows
	f := &tablepb.DataFragment{Id: id, PhysicalRows: nf.PhysicalRows}
	for _, df := range nf.Files {
		f.Files = append(f.Files, &tablepb.DataFile{
			Path: df.Path, Fields: df.Fields, ColumnIndices: df.ColumnIndices,
			FileMajorVersion: df.Major, FileMinorVersion: df.Minor, FileSizeBytes: df.SizeBytes,
		})
	}
	ids, err := rowid.EncodeRowIDs(rows.ids[at:end])
	if err != nil {
		return nil, err
	}
	created, err := rowid.EncodeVersions(rows.created[at:end])
	if err != nil {
		return nil, err
	}
	updated, err := rowid.EncodeVersions(rows.updated[at:end])
	if err != nil {
		return nil, err
	}
	f.RowIdSequence = &tablepb.DataFragment_InlineRowIds{InlineRowIds: ids}
	f.CreatedAtVersionSequence = &tablepb.DataFragment_InlineCreatedAtVersions{InlineCreatedAtVersions: created}
	f.LastUpdatedAtVersionSequence = &tablepb.DataFragment_InlineLastUpdatedAtVersions{InlineLastUpdatedAtVersions: updated}
	return f, nil
}

// checkRewriteRebase decides whether rewrite c, built on base, may be
// rebuilt on latest: every fragment it rewrites must be there with the
// same metadata (no row of it deleted or updated meanwhile); otherwise
// the rewrite lost the race, as Lance's Rewrite loses to a Delete or
// Update of its fragments.
func checkRewriteRebase(c *Commit, readVersion uint64, base, latest *Manifest) error {
	now := make(map[uint64]*Fragment, len(latest.Fragments))
	for _, f := range latest.Fragments {
		now[f.ID] = f
	}
	was := make(map[uint64]*Fragment, len(base.Fragments))
	for _, f := range base.Fragments {
		was[f.ID] = f
	}
	for _, g := range c.Rewrite {
		for _, id := range g.Old {
			if f, n := was[id], now[id]; f == nil || n == nil || !f.sameMetadata(n) {
				return &ConflictError{ReadVersion: readVersion, Version: latest.Version, Operation: OpRewrite,
					Reason: fmt.Sprintf("a rewrite of fragment %d cannot be rebased: it changed or went after version %d", id, base.Version)}
			}
		}
	}
	return nil
}

// IndexedFragments returns the ids of the fragments some index of the
// snapshot covers (the union of the indices' fragment bitmaps); all is
// true when that cannot be told (an index without a readable bitmap), and
// every fragment must be taken as covered. A rewrite of covered fragments
// would leave the indices naming fragments that are gone, so compaction
// leaves them alone.
func (s *Snapshot) IndexedFragments() (ids *roaring.Bitmap, all bool) {
	ids = roaring.New()
	m := s.Manifest
	if m.pb == nil || m.pb.IndexSection == nil {
		return ids, false
	}
	sec, err := lengthPrefixed(m.raw, m.pb.GetIndexSection())
	if err != nil {
		return ids, true
	}
	var is tablepb.IndexSection
	if proto.Unmarshal(sec, &is) != nil {
		return ids, true
	}
	for _, ix := range is.GetIndices() {
		bm := roaring.New()
		if b := ix.GetFragmentBitmap(); len(b) == 0 || bm.UnmarshalBinary(b) != nil {
			return ids, true
		}
		ids.Or(bm)
	}
	return ids, false
}
