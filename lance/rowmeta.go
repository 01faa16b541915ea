package lance

import (
	"context"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
	"github.com/mvd-project/mvd/lance/internal/rowid"
)

// RowMeta identifies one live row of a version, as LanceDB's scan reports
// it in _rowid, _rowaddr, _row_created_at_version and
// _row_last_updated_at_version.
type RowMeta struct {
	RowID         uint64
	RowAddr       uint64
	CreatedAt     uint64
	LastUpdatedAt uint64
}

// RowAddr returns the address of a row: fragment id in the high 32 bits,
// physical offset in the low 32.
func RowAddr(fragmentID, offset uint64) uint64 { return fragmentID<<32 | offset }

// FragmentRows is the identity metadata of a fragment's physical rows:
// their stable row ids and created-at and last-updated-at versions (read
// from the fragment's sequences), plus the deleted offsets. It is
// immutable.
type FragmentRows struct {
	Fragment *Fragment
	// Deleted are the deleted physical offsets.
	Deleted *roaring.Bitmap

	rowIDs                   *rowid.U64Sequence     // nil without stable row ids
	createdAt, lastUpdatedAt *rowid.VersionSequence // nil when not recorded
}

// RowID returns the row id of the row at physical offset off: its stable
// row id, or its row address in a table without stable row ids.
func (fr *FragmentRows) RowID(off uint64) uint64 {
	if fr.rowIDs == nil {
		return RowAddr(fr.Fragment.ID, off)
	}
	return fr.rowIDs.At(off)
}

// CreatedAt returns the version that created the row at offset off (1 when
// the fragment records none, as LanceDB reports).
func (fr *FragmentRows) CreatedAt(off uint64) uint64 { return rowid.VersionAt(fr.createdAt, off) }

// LastUpdatedAt returns the version that last updated the row at offset
// off (1 when the fragment records none).
func (fr *FragmentRows) LastUpdatedAt(off uint64) uint64 {
	return rowid.VersionAt(fr.lastUpdatedAt, off)
}

// FragmentRows loads the row identity metadata of one fragment of the
// snapshot.
func (s *Snapshot) FragmentRows(ctx context.Context, f *Fragment) (*FragmentRows, error) {
	if err := s.ctxErr(ctx, "read row metadata of fragment"); err != nil {
		return nil, err
	}
	return s.table.fragmentRows(s.Manifest, f)
}

// fragmentRows loads the row identity metadata of one fragment of m.
func (t *Table) fragmentRows(m *Manifest, f *Fragment) (*FragmentRows, error) {
	fr := &FragmentRows{Fragment: f}
	var err error
	if fr.Deleted, err = t.deletedOffsets(f); err != nil {
		return nil, err
	}
	if !m.StableRowIDs() {
		return fr, nil
	}
	op := "read row metadata of fragment"
	if fr.rowIDs, err = t.rowIDSequenceFor(m, f, op); err != nil {
		return nil, err
	}
	for _, v := range []struct {
		inline   []byte
		external *tablepb.ExternalFile
		dst      **rowid.VersionSequence
		what     string
	}{
		{f.pb.GetInlineCreatedAtVersions(), f.pb.GetExternalCreatedAtVersions(), &fr.createdAt, "created-at"},
		{f.pb.GetInlineLastUpdatedAtVersions(), f.pb.GetExternalLastUpdatedAtVersions(), &fr.lastUpdatedAt, "last-updated-at"},
	} {
		b, err := t.sequenceBytes(v.inline, v.external)
		if err != nil {
			return nil, t.wrap(m.Version, op, err)
		}
		if b == nil {
			continue // older writers: versions unknown
		}
		seq, err := rowid.DecodeVersionSequence(b)
		if err != nil {
			return nil, t.wrap(m.Version, op, wrapf(err, "fragment %d %s versions", f.ID, v.what))
		}
		if seq.Len() != f.PhysicalRows {
			return nil, t.errorf(m.Version, op, "%w: fragment %d has %s versions for %d rows, want %d", ErrCorrupt, f.ID, v.what, seq.Len(), f.PhysicalRows)
		}
		*v.dst = seq
	}
	return fr, nil
}

// sequenceBytes returns an inline sequence, or reads an external one. It
// returns nil when the fragment stores neither.
func (t *Table) sequenceBytes(inline []byte, ext *tablepb.ExternalFile) ([]byte, error) {
	if inline != nil {
		return inline, nil
	}
	if ext == nil {
		return nil, nil
	}
	f, err := t.objs.Open(t.path(ext.GetPath()))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	off, size := ext.GetOffset(), ext.GetSize()
	if off > uint64(f.Size()) || size > uint64(f.Size())-off {
		return nil, corruptf("external sequence %s [%d, +%d) beyond its %d bytes", ext.GetPath(), off, size, f.Size())
	}
	buf := make([]byte, size)
	if _, err := f.ReadAt(buf, int64(off)); err != nil {
		return nil, err
	}
	return buf, nil
}

// Each calls fn for every live row of the fragment in physical order.
func (fr *FragmentRows) Each(fn func(offset uint64, r RowMeta) error) error {
	n := fr.Fragment.PhysicalRows
	var ids []uint64
	if fr.rowIDs != nil {
		ids = make([]uint64, 0, n)
		fr.rowIDs.Each(0, n, func(id uint64) { ids = append(ids, id) })
	}
	created, updated := rowid.NewCursor(fr.createdAt), rowid.NewCursor(fr.lastUpdatedAt)
	for off := uint64(0); off < n; off++ {
		if fr.Deleted.Contains(uint32(off)) {
			continue
		}
		r := RowMeta{RowAddr: RowAddr(fr.Fragment.ID, off), CreatedAt: created.At(off), LastUpdatedAt: updated.At(off)}
		r.RowID = r.RowAddr
		if ids != nil {
			r.RowID = ids[off]
		}
		if err := fn(off, r); err != nil {
			return err
		}
	}
	return nil
}

// ScanRowMeta calls fn for every live row of the snapshot, in LanceDB's
// scan order (fragment order, then offset). ctx is checked between
// fragments.
func (s *Snapshot) ScanRowMeta(ctx context.Context, fn func(RowMeta) error) error {
	for _, f := range s.Fragments {
		fr, err := s.FragmentRows(ctx, f)
		if err != nil {
			return err
		}
		if err := fr.Each(func(_ uint64, r RowMeta) error { return fn(r) }); err != nil {
			return err
		}
	}
	return nil
}

// CountRows returns the live rows of the snapshot. It trusts the
// deleted-row counts recorded in the manifest and reads a deletion file
// only when its count is missing.
func (s *Snapshot) CountRows(ctx context.Context) (uint64, error) {
	var n uint64
	for _, f := range s.Fragments {
		if f.Deletion == nil || f.Deletion.NumDeletedRows > 0 {
			n += f.LiveRows()
			continue
		}
		if err := s.ctxErr(ctx, "count rows"); err != nil {
			return 0, err
		}
		del, err := s.table.deletedOffsets(f)
		if err != nil {
			return 0, err
		}
		n += f.PhysicalRows - del.GetCardinality()
	}
	return n, nil
}
