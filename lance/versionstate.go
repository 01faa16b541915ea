package lance

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/mvd-project/mvd/lance/internal/rowid"
)

// ErrStateMismatch means a kept VersionState does not agree with the
// table it is compared with: another incarnation of the table, a restore
// or an overwrite since, or a fragment changed in a way a change set from
// metadata cannot follow. The caller rebuilds rather than trust it.
var ErrStateMismatch = errors.New("the kept version state does not agree with the table")

// VersionState is one version of a table as a change set from it needs
// it: its manifest, the deleted offsets of its fragments and the row-id
// and version sequences they keep in files of their own. It is held apart
// from the table (MarshalBinary, DecodeVersionState) so that a change set
// from that version can still be computed once the table's owner has
// cleaned the version up (LanceDB's cleanupOldVersions deletes its
// manifest, and deletion files no later version references).
//
// A VersionState is immutable and safe for concurrent use.
type VersionState struct {
	m     *Manifest
	frags map[uint64]*keptFragment
}

// keptFragment is what a fragment of a VersionState keeps outside its
// manifest entry; nil fields are not kept (none, or inline).
type keptFragment struct {
	deleted     *roaring.Bitmap
	delBytes    []byte // deleted's portable encoding
	rowIDs      []byte // an external row-id sequence's bytes
	lastUpdated []byte // an external last-updated-at sequence's bytes
}

// Version is the table version the state is of.
func (vs *VersionState) Version() uint64 { return vs.m.Version }

// Timestamp is the version's commit time.
func (vs *VersionState) Timestamp() time.Time { return vs.m.Timestamp }

// Schema is the version's schema.
func (vs *VersionState) Schema() *Schema { return vs.m.Schema }

// State reads what a change set from s needs of it, as a VersionState:
// the deletion files and external sequences of its fragments, which a
// cleanup may delete. The table must have stable row ids.
func (s *Snapshot) State(ctx context.Context) (*VersionState, error) {
	return s.StateSince(ctx, nil)
}

// StateSince is State reusing what prev, a state of an earlier version of
// the table (nil: none), kept of the fragments whose metadata has not
// changed since: a state kept after every refresh reads and encodes only
// the deletion files and sequences that are new.
func (s *Snapshot) StateSince(ctx context.Context, prev *VersionState) (*VersionState, error) {
	const op = "keep version state"
	m := s.Manifest
	if !m.StableRowIDs() {
		return nil, s.table.errorf(m.Version, op, "%w: %s", ErrNoStableRowIDs, noStableRowIDsHint)
	}
	if m.raw == nil {
		return nil, s.table.errorf(m.Version, op, "%w: the manifest's bytes are not known", ErrUnsupported)
	}
	var before map[uint64]*Fragment
	if prev != nil {
		before = make(map[uint64]*Fragment, len(prev.m.Fragments))
		for _, f := range prev.m.Fragments {
			before[f.ID] = f
		}
	}
	vs := &VersionState{m: m, frags: map[uint64]*keptFragment{}}
	for _, f := range m.Fragments {
		if err := s.ctxErr(ctx, op); err != nil {
			return nil, err
		}
		if pf := before[f.ID]; pf != nil && pf.raw != nil && bytes.Equal(pf.raw, f.raw) {
			if k := prev.frags[f.ID]; k != nil {
				vs.frags[f.ID] = k // immutable: shared
			}
			continue
		}
		var k keptFragment
		var err error
		if f.Deletion != nil {
			if k.deleted, err = s.table.sharedDeletedOffsets(f); err != nil {
				return nil, err
			}
			if k.delBytes, err = k.deleted.ToBytes(); err != nil {
				return nil, s.table.wrap(m.Version, op, err)
			}
		}
		if f.pb.GetInlineRowIds() == nil && f.pb.GetExternalRowIds() != nil {
			if k.rowIDs, err = s.table.sequenceBytes(nil, f.pb.GetExternalRowIds()); err != nil {
				return nil, s.table.wrap(m.Version, op, err)
			}
		}
		if f.pb.GetInlineLastUpdatedAtVersions() == nil && f.pb.GetExternalLastUpdatedAtVersions() != nil {
			if k.lastUpdated, err = s.table.sequenceBytes(nil, f.pb.GetExternalLastUpdatedAtVersions()); err != nil {
				return nil, s.table.wrap(m.Version, op, err)
			}
		}
		if k.deleted != nil || k.rowIDs != nil || k.lastUpdated != nil {
			vs.frags[f.ID] = &k
		}
	}
	return vs, nil
}

// ChangesFromState returns the change set from the version from was kept
// of to the snapshot to, as Changes does from metadata only, once from
// was checked against to: the same table (carriedOn), its fragments that
// are left unchanged but for new deletions, no fragment id reused since
// (no overwrite, restore or recreation in between), row-id counters that
// only grew. A state that does not
// agree fails with ErrStateMismatch; the change set is then unknown, and
// the caller rebuilds.
func ChangesFromState(ctx context.Context, from *VersionState, to *Snapshot) (*ChangeSet, error) {
	t := to.table
	op := fmt.Sprintf("compute changes %d..%d from a kept state", from.m.Version, to.Version)
	if err := to.ctxErr(ctx, op); err != nil {
		return nil, err
	}
	err := from.agrees(t, to.Manifest)
	if err == nil {
		err = from.carriedOn(ctx, to)
	}
	if err != nil {
		if errors.Is(err, ErrStateMismatch) {
			return nil, t.errorf(to.Version, op, "%w", err)
		}
		return nil, t.wrap(to.Version, op, err)
	}
	return t.changesFrom(ctx, from.m, from, to.Manifest)
}

// carriedOn checks that the table to belongs to carries on from the kept
// version, not another table of the same name: the first of its versions
// after the kept one still holds one of the kept version's data files
// (their names are random UUIDs), in a fragment or in the fragments its
// compaction rewrote. After a compaction between them that is no longer
// there, that cannot be proven. A kept version without rows needs no
// proof: every row at to is inserted, whichever table it is.
func (vs *VersionState) carriedOn(ctx context.Context, to *Snapshot) error {
	a := vs.m
	if a.LiveRows() == 0 || a.Version == to.Version {
		return nil
	}
	first, err := firstAfter(ctx, to, a.Version)
	if err != nil {
		return err
	}
	files := map[string]bool{}
	for _, f := range a.Fragments {
		for _, df := range f.Files {
			files[df.Path] = true
		}
	}
	for _, g := range first.Fragments {
		for _, df := range g.Files {
			if files[df.Path] {
				return nil
			}
		}
	}
	tx, err := to.table.transaction(first.Manifest)
	if err != nil {
		return err
	}
	if rw := tx.rewrite(); rw != nil {
		olds := rw.GetOldFragments()
		for _, g := range rw.GetGroups() {
			olds = append(olds, g.GetOldFragments()...)
		}
		for _, f := range olds {
			for _, df := range f.GetFiles() {
				if files[df.GetPath()] {
					return nil
				}
			}
		}
	}
	return fmt.Errorf("%w: version %d, the first after the kept version %d still there, holds none of its data files: that it is the same table cannot be proven (recreated, or compacted in a version cleaned up since)", ErrStateMismatch, first.Version, a.Version)
}

// firstAfter is the first version of to's table after v that is still
// there (to itself when none before it is).
func firstAfter(ctx context.Context, to *Snapshot, v uint64) (*Snapshot, error) {
	refs, err := to.table.Versions(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range refs {
		if r.Version <= v || r.Version >= to.Version {
			continue
		}
		s, err := to.table.Checkout(ctx, r.Version)
		if errors.Is(err, ErrVersionNotFound) {
			continue // cleaned up since the listing
		}
		return s, err
	}
	return to, nil
}

// agrees checks that b, a manifest of t, can follow the kept version.
func (vs *VersionState) agrees(t *Table, b *Manifest) error {
	a := vs.m
	mismatch := func(f string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrStateMismatch, fmt.Sprintf(f, args...))
	}
	switch {
	case a.Version > b.Version:
		return mismatch("version %d is older than the kept version %d", b.Version, a.Version)
	case a.Version == b.Version && !a.Timestamp.Equal(b.Timestamp):
		return mismatch("version %d was committed at another time than the kept one", b.Version)
	case !b.StableRowIDs():
		return mismatch("version %d has no stable row ids", b.Version)
	case b.NextRowID < a.NextRowID:
		return mismatch("the next row id went back from %d to %d", a.NextRowID, b.NextRowID)
	case a.HasMaxFragmentID && (!b.HasMaxFragmentID || b.MaxFragmentID < a.MaxFragmentID):
		return mismatch("the highest fragment id went back from %d", a.MaxFragmentID)
	}
	byID := make(map[uint64]*Fragment, len(a.Fragments))
	for _, f := range a.Fragments {
		byID[f.ID] = f
	}
	for _, g := range b.Fragments {
		f := byID[g.ID]
		if f == nil {
			if a.HasMaxFragmentID && g.ID <= uint64(a.MaxFragmentID) {
				return mismatch("fragment %d of version %d reuses an id of the kept version's history (an overwrite, a restore or another table)", g.ID, b.Version)
			}
			continue
		}
		if f.PhysicalRows != g.PhysicalRows || !(bytes.Equal(f.raw, g.raw) || deletionOnly(f, g)) {
			return mismatch("fragment %d changed in more than its deletions from version %d to %d", g.ID, a.Version, b.Version)
		}
		da, err := vs.sharedDeletedOffsets(f)
		if err != nil {
			return err
		}
		db, err := t.sharedDeletedOffsets(g)
		if err != nil {
			return err
		}
		if !roaring.AndNot(da, db).IsEmpty() {
			return mismatch("fragment %d regained deleted rows from version %d to %d (a restore)", g.ID, a.Version, b.Version)
		}
	}
	return nil
}

// sharedDeletedOffsets returns the kept deleted offsets of f, a fragment
// of the kept manifest.
func (vs *VersionState) sharedDeletedOffsets(f *Fragment) (*roaring.Bitmap, error) {
	if k := vs.frags[f.ID]; k != nil && k.deleted != nil {
		return k.deleted, nil
	}
	return roaring.New(), nil
}

// fragmentRows returns the row identity metadata of f, a fragment of the
// kept manifest m, from what was kept (created-at versions are left out:
// a change set does not read them).
func (vs *VersionState) fragmentRows(m *Manifest, f *Fragment) (*FragmentRows, error) {
	k := vs.frags[f.ID]
	if k == nil {
		k = &keptFragment{}
	}
	fr := &FragmentRows{Fragment: f, Deleted: k.deleted}
	if fr.Deleted == nil {
		fr.Deleted = roaring.New()
	}
	ids := f.pb.GetInlineRowIds()
	if ids == nil {
		ids = k.rowIDs
	}
	if ids == nil {
		return nil, corruptf("kept version %d: fragment %d has no row id sequence", m.Version, f.ID)
	}
	seq, err := rowid.DecodeRowIDSequence(ids)
	if err != nil {
		return nil, wrapf(err, "kept version %d: fragment %d row ids", m.Version, f.ID)
	}
	if seq.Len() != f.PhysicalRows {
		return nil, corruptf("kept version %d: fragment %d has %d row ids for %d rows", m.Version, f.ID, seq.Len(), f.PhysicalRows)
	}
	fr.rowIDs = seq
	vb := f.pb.GetInlineLastUpdatedAtVersions()
	if vb == nil {
		vb = k.lastUpdated
	}
	if vb != nil {
		vseq, err := rowid.DecodeVersionSequence(vb)
		if err != nil {
			return nil, wrapf(err, "kept version %d: fragment %d last-updated-at versions", m.Version, f.ID)
		}
		if vseq.Len() != f.PhysicalRows {
			return nil, corruptf("kept version %d: fragment %d has versions for %d rows, want %d", m.Version, f.ID, vseq.Len(), f.PhysicalRows)
		}
		fr.lastUpdatedAt = vseq
	}
	return fr, nil
}

// The encoding of a VersionState:
//
//	magic (8 bytes)
//	uvarint len, manifest file bytes
//	uvarint n, n × (uvarint fragment id, uvarint what, then for each bit
//	of what in order — deleted offsets (portable roaring), external row
//	ids, external last-updated-at versions — uvarint len, bytes)
//	CRC-32C of all the above (4 bytes, little endian)
const stateMagic = "LVSTATE1"

const (
	keptDeleted = 1 << iota
	keptRowIDs
	keptLastUpdated
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary encodes the state (DecodeVersionState reads it back).
func (vs *VersionState) MarshalBinary() ([]byte, error) {
	b := append([]byte(nil), stateMagic...)
	b = binary.AppendUvarint(b, uint64(len(vs.m.raw)))
	b = append(b, vs.m.raw...)
	b = binary.AppendUvarint(b, uint64(len(vs.frags)))
	// In manifest order, so that one state always encodes alike.
	for _, f := range vs.m.Fragments {
		k := vs.frags[f.ID]
		if k == nil {
			continue
		}
		var what uint64
		var parts [][]byte
		if k.deleted != nil {
			what, parts = what|keptDeleted, append(parts, k.delBytes)
		}
		if k.rowIDs != nil {
			what, parts = what|keptRowIDs, append(parts, k.rowIDs)
		}
		if k.lastUpdated != nil {
			what, parts = what|keptLastUpdated, append(parts, k.lastUpdated)
		}
		b = binary.AppendUvarint(b, f.ID)
		b = binary.AppendUvarint(b, what)
		for _, p := range parts {
			b = binary.AppendUvarint(b, uint64(len(p)))
			b = append(b, p...)
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// DecodeVersionState decodes a MarshalBinary encoding. A damaged or
// truncated one fails with ErrCorrupt.
func DecodeVersionState(b []byte) (*VersionState, error) {
	if len(b) < len(stateMagic)+4 || string(b[:len(stateMagic)]) != stateMagic {
		return nil, corruptf("not a kept version state")
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, corruptf("kept version state: checksum mismatch")
	}
	r := stateReader{b: body[len(stateMagic):]}
	raw := r.bytes()
	if r.err != nil {
		return nil, r.err
	}
	m, err := decodeManifest(bytes.Clone(raw))
	if err != nil {
		return nil, wrapf(err, "kept version state")
	}
	if !m.StableRowIDs() {
		return nil, corruptf("kept version state of version %d has no stable row ids", m.Version)
	}
	vs := &VersionState{m: m, frags: map[uint64]*keptFragment{}}
	n := r.uvarint()
	for i := uint64(0); i < n && r.err == nil; i++ {
		if err := vs.decodeFragment(&r); err != nil {
			return nil, err
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = corruptf("kept version state: %d bytes past its end", len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	return vs, vs.complete()
}

// decodeFragment reads one kept fragment from r.
func (vs *VersionState) decodeFragment(r *stateReader) error {
	id, what := r.uvarint(), r.uvarint()
	f := vs.m.Fragment(id)
	if r.err == nil && (f == nil || what == 0 || what >= keptLastUpdated<<1) {
		return corruptf("kept version state: fragment %d (%#x) is not one of version %d's", id, what, vs.m.Version)
	}
	k := &keptFragment{}
	if what&keptDeleted != 0 {
		d := r.bytes()
		if r.err == nil {
			bm := roaring.New()
			if _, err := bm.ReadFrom(bytes.NewReader(d)); err != nil {
				return corruptf("kept version state: deletions of fragment %d: %v", id, err)
			}
			if !bm.IsEmpty() && uint64(bm.Maximum()) >= f.PhysicalRows {
				return corruptf("kept version state: fragment %d deletes offset %d of %d rows", id, bm.Maximum(), f.PhysicalRows)
			}
			k.deleted, k.delBytes = bm, bytes.Clone(d)
		}
	}
	if what&keptRowIDs != 0 {
		k.rowIDs = bytes.Clone(r.bytes())
	}
	if what&keptLastUpdated != 0 {
		k.lastUpdated = bytes.Clone(r.bytes())
	}
	vs.frags[id] = k
	return r.err
}

// complete checks that every fragment that needs something kept has it.
func (vs *VersionState) complete() error {
	for _, f := range vs.m.Fragments {
		k := vs.frags[f.ID]
		if k == nil {
			k = &keptFragment{}
		}
		switch {
		case f.Deletion == nil && k.deleted != nil:
			return corruptf("kept version state: fragment %d keeps deletions its manifest does not record", f.ID)
		case f.Deletion != nil && k.deleted == nil:
			return corruptf("kept version state: the deletions of fragment %d are missing", f.ID)
		case f.Deletion != nil && f.Deletion.NumDeletedRows != 0 && k.deleted.GetCardinality() != f.Deletion.NumDeletedRows:
			return corruptf("kept version state: fragment %d keeps %d deletions, its manifest says %d", f.ID, k.deleted.GetCardinality(), f.Deletion.NumDeletedRows)
		case f.pb.GetInlineRowIds() == nil && k.rowIDs == nil:
			return corruptf("kept version state: the row ids of fragment %d are missing", f.ID)
		case f.pb.GetInlineLastUpdatedAtVersions() == nil && f.pb.GetExternalLastUpdatedAtVersions() != nil && k.lastUpdated == nil:
			return corruptf("kept version state: the versions of fragment %d are missing", f.ID)
		}
	}
	return nil
}

// stateReader reads a VersionState encoding; its first error sticks.
type stateReader struct {
	b   []byte
	err error
}

func (r *stateReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = corruptf("kept version state: truncated")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *stateReader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = corruptf("kept version state: a %d-byte part in %d bytes", n, len(r.b))
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}
