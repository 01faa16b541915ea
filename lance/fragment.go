package lance

import (
	"bytes"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/mvd-project/mvd/lance/internal/format"
	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// Fragment is a set of data files holding the same rows, plus the metadata
// that gives those rows their ids and versions.
type Fragment struct {
	// ID is unique within the table's history.
	ID uint64
	// PhysicalRows counts the rows written, deleted ones included.
	PhysicalRows uint64
	// Files are the fragment's data files (more than one after columns are
	// added).
	Files []DataFile
	// Deletion is the fragment's deletion file, or nil when no row of it
	// has been deleted.
	Deletion *DeletionFile

	version uint64 // of the first manifest read that holds it, for errors
	pb      *tablepb.DataFragment
	raw     []byte // its encoding inside the manifest, nil if unknown
}

// sameMetadata reports whether f and g (the same fragment id at two
// versions) have identical metadata. Equal encodings are the common case
// and cost a memcmp; different encodings of the same message (another
// writer's field order) fall back to comparing the messages, which is
// then only paid for fragments that look changed.
func (f *Fragment) sameMetadata(g *Fragment) bool {
	if f.raw != nil && g.raw != nil && bytes.Equal(f.raw, g.raw) {
		return true
	}
	return proto.Equal(f.pb, g.pb)
}

// DataFile is one data file of a fragment: its path (relative to data/),
// the field ids it stores, and its format version.
type DataFile = format.DataFile

// DeletionKind is the encoding of a deletion file.
type DeletionKind int

const (
	// DeletionArrow is an Arrow IPC file of deleted offsets (.arrow).
	DeletionArrow DeletionKind = iota
	// DeletionBitmap is a portable 32-bit roaring bitmap (.bin).
	DeletionBitmap
)

// DeletionFile names the file of a fragment's deleted row offsets.
type DeletionFile struct {
	Kind           DeletionKind
	ReadVersion    uint64
	ID             uint64
	NumDeletedRows uint64 // 0 may mean "not recorded"
}

// fileName returns the deletion file's name inside _deletions/.
func (d *DeletionFile) fileName(fragmentID uint64) string {
	ext := "arrow"
	if d.Kind == DeletionBitmap {
		ext = "bin"
	}
	return fmt.Sprintf("%d-%d-%d.%s", fragmentID, d.ReadVersion, d.ID, ext)
}

// LiveRows returns the fragment's visible rows, as recorded in the
// manifest: physical rows minus the deletion file's recorded count.
func (f *Fragment) LiveRows() uint64 {
	if f.Deletion == nil || f.Deletion.NumDeletedRows > f.PhysicalRows {
		return f.PhysicalRows
	}
	return f.PhysicalRows - f.Deletion.NumDeletedRows
}

func newFragment(p *tablepb.DataFragment) (*Fragment, error) {
	f := &Fragment{ID: p.GetId(), PhysicalRows: p.GetPhysicalRows(), pb: p}
	if len(p.GetOverlays()) > 0 {
		return nil, unsupportedf("data overlay files")
	}
	for _, df := range p.GetFiles() {
		if df.BaseId != nil {
			return nil, unsupportedf("data file %s lives under base path %d", df.GetPath(), df.GetBaseId())
		}
		if len(df.GetColumnIndices()) != 0 && len(df.GetColumnIndices()) != len(df.GetFields()) {
			return nil, corruptf("data file %s lists %d fields but %d column indices", df.GetPath(), len(df.GetFields()), len(df.GetColumnIndices()))
		}
		f.Files = append(f.Files, DataFile{
			Path:          df.GetPath(),
			Fields:        df.GetFields(),
			ColumnIndices: df.GetColumnIndices(),
			Major:         df.GetFileMajorVersion(),
			Minor:         df.GetFileMinorVersion(),
			SizeBytes:     df.GetFileSizeBytes(),
		})
	}
	if d := p.GetDeletionFile(); d != nil {
		if d.BaseId != nil {
			return nil, unsupportedf("deletion file under base path %d", d.GetBaseId())
		}
		kind := DeletionArrow
		switch d.GetFileType() {
		case tablepb.DeletionFile_ARROW_ARRAY:
		case tablepb.DeletionFile_BITMAP:
			kind = DeletionBitmap
		default:
			return nil, unsupportedf("deletion file type %d", d.GetFileType())
		}
		if d.GetNumDeletedRows() > f.PhysicalRows {
			return nil, corruptf("deletion file records %d deleted rows of %d", d.GetNumDeletedRows(), f.PhysicalRows)
		}
		f.Deletion = &DeletionFile{Kind: kind, ReadVersion: d.GetReadVersion(), ID: d.GetId(), NumDeletedRows: d.GetNumDeletedRows()}
	}
	return f, nil
}
