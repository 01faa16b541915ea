package lance

import (
	"bytes"
	"context"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"google.golang.org/protobuf/encoding/protowire"
)

// ChangeSet is what happened to a table's rows between two versions,
// in stable row ids.
type ChangeSet struct {
	From, To uint64
	// Inserted rows are live at To and were not at From.
	Inserted *roaring64.Bitmap
	// Updated rows are live at both and were last updated after From.
	Updated *roaring64.Bitmap
	// Deleted rows were live at From and are not at To.
	Deleted *roaring64.Bitmap
	// Stats says how much metadata was examined.
	Stats ChangeStats
}

// ChangeStats describes the work a change set computation did.
type ChangeStats struct {
	// FragmentsSkipped were identical at both versions and not examined.
	FragmentsSkipped int
	// FragmentsExamined had their row ids, versions and deletions read.
	FragmentsExamined int
}

// IsEmpty reports whether no row changed.
func (c *ChangeSet) IsEmpty() bool {
	return c.Inserted.IsEmpty() && c.Updated.IsEmpty() && c.Deleted.IsEmpty()
}

// noStableRowIDsHint tells users how to get a table with stable row ids.
const noStableRowIDsHint = `row ids change on update and compaction, so changes cannot be tracked; ` +
	`recreate the table with stable row ids (LanceDB: storageOptions {new_table_enable_stable_row_ids: "true"} ` +
	`in Node, storage_options={"new_table_enable_stable_row_ids": "true"} in Python), ` +
	`or copy it into one with: mvd table copy SRC DST --stable-row-ids=true`

// Changes returns the change set between versions from <= to of the
// table (from == to gives an empty set); see the package function Changes.
func (t *Table) Changes(ctx context.Context, from, to uint64) (*ChangeSet, error) {
	if from > to {
		return nil, t.errorf(0, "compute changes", "from version %d is after to version %d", from, to)
	}
	a, err := t.Checkout(ctx, from)
	if err != nil {
		return nil, err
	}
	b := a
	if to != from {
		if b, err = t.Checkout(ctx, to); err != nil {
			return nil, err
		}
	}
	return Changes(ctx, a, b)
}

// Changes returns the change set between two snapshots of one table, from
// older than (or equal to) to. It reads manifests, row-id and version
// sequences and deletion files only, never a data file, and skips
// fragments identical in both versions, so its cost follows the change,
// not the table. ctx is checked between fragments.
func Changes(ctx context.Context, from, to *Snapshot) (*ChangeSet, error) {
	if from.table.root != to.table.root {
		return nil, to.table.errorf(0, "compute changes", "the snapshots belong to different tables (%s, %s)", from.table.root, to.table.root)
	}
	if err := to.ctxErr(ctx, "compute changes"); err != nil {
		return nil, err
	}
	return to.table.changesBetween(ctx, from.Manifest, to.Manifest)
}

// rowMetaSource reads the row metadata of the fragments of a change set's
// older end: the table's own files (*Table), or a VersionState kept apart
// from them once the version was cleaned up.
type rowMetaSource interface {
	// sharedDeletedOffsets returns f's deleted offsets (not to be modified).
	sharedDeletedOffsets(f *Fragment) (*roaring.Bitmap, error)
	// fragmentRows returns the row identity metadata of f, a fragment of m.
	fragmentRows(m *Manifest, f *Fragment) (*FragmentRows, error)
}

// changesBetween is Changes over two manifests of t, a older than (or
// equal to) b.
func (t *Table) changesBetween(ctx context.Context, a, b *Manifest) (*ChangeSet, error) {
	return t.changesFrom(ctx, a, t, b)
}

// changesFrom is changesBetween with a's row metadata read from as.
func (t *Table) changesFrom(ctx context.Context, a *Manifest, as rowMetaSource, b *Manifest) (*ChangeSet, error) {
	op := fmt.Sprintf("compute changes %d..%d", a.Version, b.Version)
	if a.Version > b.Version {
		return nil, t.errorf(0, op, "versions are in the wrong order")
	}
	for _, m := range []*Manifest{a, b} {
		if !m.StableRowIDs() {
			return nil, t.errorf(m.Version, op, "%w: %s", ErrNoStableRowIDs, noStableRowIDsHint)
		}
	}
	cs := &ChangeSet{From: a.Version, To: b.Version, Inserted: roaring64.New(), Updated: roaring64.New(), Deleted: roaring64.New()}
	if a.Version == b.Version {
		return cs, nil
	}
	examineA, examineB, lost, err := t.touchedFragments(as, a, b, &cs.Stats)
	if err != nil {
		return nil, t.wrap(b.Version, op, err)
	}

	// Rows by last-updated version (up to a's), at both ends: a restore
	// can bring a row back to an older version than it had at a.
	verA, verB := map[uint64]*roaring64.Bitmap{}, map[uint64]*roaring64.Bitmap{}
	liveA, _, err := liveIDs(ctx, as, a, examineA, 0, verA, &cs.Stats)
	if err != nil {
		return nil, t.wrap(a.Version, op, err)
	}
	liveB, recentB, err := liveIDs(ctx, t, b, examineB, a.Version, verB, &cs.Stats)
	if err != nil {
		return nil, t.wrap(b.Version, op, err)
	}
	// The lost rows were live at a, in fragments skipped above.
	liveA.Or(lost)
	// Ids are never reused and a live id lives in exactly one fragment, so
	// the changed fragments alone decide membership.
	cs.Inserted = roaring64.AndNot(liveB, liveA)
	cs.Deleted = roaring64.AndNot(liveA, liveB)
	cs.Updated = roaring64.And(liveA, liveB)
	reverted := revertedRows(cs.Updated, recentB, verA, verB)
	cs.Updated.And(recentB)
	cs.Updated.Or(reverted)
	return cs, nil
}

// touchedFragments returns the fragments of a and of b whose rows a
// change set from a to b must read, and the rows of a lost to deletions
// alone, found without reading the fragments they were in; st counts the
// fragments skipped and examined.
func (t *Table) touchedFragments(as rowMetaSource, a, b *Manifest, st *ChangeStats) (examineA, examineB []*Fragment, lost *roaring64.Bitmap, err error) {
	// Only the fragments a commit touched are read: the others are
	// found unchanged by a memcmp, or by identity where the two manifests
	// share the Fragment, in one walk over both lists by id.
	//
	// A fragment that only lost rows to deletions (a delete, or the old
	// side of an update) contributes just those rows, found from its two
	// deletion files: its other rows are live at both ends and not recent
	// (its version sequences are unchanged, so at most a), so they change
	// nothing, and reading them would cost the fragment's size.
	var deletedOnly [][2]*Fragment
	pairFragments(a.Fragments, b.Fragments, func(old, f *Fragment) {
		switch {
		case f == nil:
			examineA = append(examineA, old) // removed
		case old == nil:
			examineB = append(examineB, f) // added
		case old == f, old.raw != nil && f.raw != nil && bytes.Equal(old.raw, f.raw):
			// Byte-identical metadata: the same live rows with the same
			// versions at both ends, it cannot contribute.
			st.FragmentsSkipped++
		case deletionOnly(old, f):
			deletedOnly = append(deletedOnly, [2]*Fragment{old, f})
		case old.sameMetadata(f): // the same message, encoded otherwise
			st.FragmentsSkipped++
		default:
			examineA = append(examineA, old)
			examineB = append(examineB, f)
		}
	})
	lost = roaring64.New()
	for _, p := range deletedOnly {
		old, f := p[0], p[1]
		ids, ok, err := t.newlyDeleted(as, old, b, f)
		if err != nil {
			return nil, nil, nil, err
		}
		if ok {
			lost.Or(ids)
			st.FragmentsExamined++
			continue
		}
		examineA = append(examineA, old)
		examineB = append(examineB, f)
	}
	return examineA, examineB, lost, nil
}

// pairFragments calls fn once for every fragment id of a or b, with the
// fragment of each list holding it (nil where one does not). Lists sorted
// by id, as writers keep them, are walked together with no allocation;
// others are matched through a map.
func pairFragments(a, b []*Fragment, fn func(old, f *Fragment)) {
	if sortedByID(a) && sortedByID(b) {
		i, j := 0, 0
		for i < len(a) || j < len(b) {
			switch {
			case j == len(b) || (i < len(a) && a[i].ID < b[j].ID):
				fn(a[i], nil)
				i++
			case i == len(a) || b[j].ID < a[i].ID:
				fn(nil, b[j])
				j++
			default:
				fn(a[i], b[j])
				i++
				j++
			}
		}
		return
	}
	inB := make(map[uint64]bool, len(b))
	byID := make(map[uint64]*Fragment, len(a))
	for _, f := range a {
		byID[f.ID] = f
	}
	for _, f := range b {
		inB[f.ID] = true
		fn(byID[f.ID], f)
	}
	for _, f := range a {
		if !inB[f.ID] {
			fn(f, nil)
		}
	}
}

// sortedByID reports whether frags are in increasing id order.
func sortedByID(frags []*Fragment) bool {
	for i := 1; i < len(frags); i++ {
		if frags[i].ID <= frags[i-1].ID {
			return false
		}
	}
	return true
}

// revertedRows returns the rows of both (live at both ends) and not in
// recent (last updated at or before a at the end) whose last-updated
// version at the end is not the one they had at a: rows a restore took
// back to an older version of themselves. Ahead of a restore versions
// only grow, so it is empty. Rows whose version at a is not recorded
// (older writers) are left out.
func revertedRows(both, recent *roaring64.Bitmap, verA, verB map[uint64]*roaring64.Bitmap) *roaring64.Bitmap {
	out := roaring64.New()
	if len(verA) == 0 {
		return out
	}
	cand := roaring64.AndNot(both, recent)
	if cand.IsEmpty() {
		return out
	}
	for _, rows := range verA {
		out.Or(rows)
	}
	out.And(cand) // the candidates whose version at a is known
	for v, rows := range verA {
		if at := verB[v]; at != nil {
			out.AndNot(roaring64.And(rows, at)) // the same version at both ends
		}
	}
	return out
}

// liveIDs returns the live row ids of frags, fragments of m, and, when
// after > 0, those of them last updated after version after. The live
// rows last updated at or before after (all of them when after is 0) are
// added to byVersion under their version, where recorded.
func liveIDs(ctx context.Context, src rowMetaSource, m *Manifest, frags []*Fragment, after uint64, byVersion map[uint64]*roaring64.Bitmap, st *ChangeStats) (live, recent *roaring64.Bitmap, err error) {
	live, recent = roaring64.New(), roaring64.New()
	for _, f := range frags {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		st.FragmentsExamined++
		fr, err := src.fragmentRows(m, f)
		if err != nil {
			return nil, nil, err
		}
		if after > 0 && fr.lastUpdatedAt == nil {
			return nil, nil, unsupportedf("fragment %d records no row versions (written by an older Lance); changes cannot be computed from metadata", f.ID)
		}
		var dead *roaring64.Bitmap
		if !fr.Deleted.IsEmpty() {
			dead = roaring64.New()
			it := fr.Deleted.Iterator()
			for it.HasNext() {
				dead.Add(fr.rowIDs.At(uint64(it.Next())))
			}
		}
		if dead == nil {
			fr.rowIDs.AddRange(live, 0, f.PhysicalRows)
		} else {
			// A row id's dead copy here leaves its live copy in another
			// fragment live, whichever of the two comes first.
			rows := roaring64.New()
			fr.rowIDs.AddRange(rows, 0, f.PhysicalRows)
			rows.AndNot(dead)
			live.Or(rows)
		}
		if fr.lastUpdatedAt != nil {
			fr.lastUpdatedAt.Runs(func(lo, hi, v uint64) {
				if after > 0 && v > after {
					fr.rowIDs.AddRange(recent, lo, hi)
					return
				}
				rows := roaring64.New()
				fr.rowIDs.AddRange(rows, lo, hi)
				if dead != nil {
					rows.AndNot(dead) // a row id's dead copy: its live one is elsewhere
				}
				if prev := byVersion[v]; prev != nil {
					prev.Or(rows)
				} else {
					byVersion[v] = rows
				}
			})
		}
	}
	recent.And(live)
	return live, recent, nil
}

// fragmentDeletionField is the field number of DataFragment.deletion_file.
const fragmentDeletionField = 3

// deletionOnly reports whether fragments f and g (one id at two versions)
// are encoded alike but for their deletion files.
func deletionOnly(f, g *Fragment) bool {
	if f.raw == nil || g.raw == nil {
		return false
	}
	fr, ok1 := withoutField(f.raw, fragmentDeletionField)
	gr, ok2 := withoutField(g.raw, fragmentDeletionField)
	return ok1 && ok2 && bytes.Equal(fr, gr)
}

// withoutField returns the message encoding b without field num.
func withoutField(b []byte, num protowire.Number) ([]byte, bool) {
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		n, typ, tl := protowire.ConsumeTag(b)
		if tl < 0 {
			return nil, false
		}
		vl := protowire.ConsumeFieldValue(n, typ, b[tl:])
		if vl < 0 {
			return nil, false
		}
		if n != num {
			out = append(out, b[:tl+vl]...)
		}
		b = b[tl+vl:]
	}
	return out, true
}

// newlyDeleted returns the row ids that fragment g of b deletes and its
// earlier self f, read from as, did not; ok is false when f deleted a row
// that g does not (then only the full comparison is right).
func (t *Table) newlyDeleted(as rowMetaSource, f *Fragment, b *Manifest, g *Fragment) (ids *roaring64.Bitmap, ok bool, err error) {
	da, err := as.sharedDeletedOffsets(f) // read only, as db
	if err != nil {
		return nil, false, err
	}
	db, err := t.sharedDeletedOffsets(g)
	if err != nil {
		return nil, false, err
	}
	if !roaring.AndNot(da, db).IsEmpty() {
		return nil, false, nil
	}
	seq, err := t.rowIDSequenceFor(b, g, "compute changes")
	if err != nil {
		return nil, false, err
	}
	ids = roaring64.New()
	it := roaring.AndNot(db, da).Iterator()
	for it.HasNext() {
		ids.Add(seq.At(uint64(it.Next()))) // in range: deletedOffsets checks
	}
	return ids, true, nil
}
