package lance

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/mvd-project/mvd/lance/internal/format"
	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
	"github.com/mvd-project/mvd/vfs"
)

// Manifest framing (see lance-format.md §1.2): the protobuf sections are
// length-prefixed, and the file ends with the position of the Manifest's
// length prefix and a 16-byte tail.
const (
	manifestTailLen = 16
	manifestMagic   = "LANC"
	manifestMajor   = 0
	manifestMinor   = 2
)

// Manifest is the decoded description of one table version. It is
// immutable and safe to share.
type Manifest struct {
	// Version is the table version this manifest describes.
	Version uint64
	// File is the manifest's name inside _versions/.
	File string
	// Timestamp is when the version was committed.
	Timestamp time.Time
	// ReaderFlags and WriterFlags are the feature flags (see flags.go).
	ReaderFlags, WriterFlags uint64
	// NextRowID is the next stable row id to assign (stable tables only).
	NextRowID uint64
	// MaxFragmentID is the highest fragment id ever used; HasMaxFragmentID
	// is false when the table never had a fragment.
	MaxFragmentID    uint32
	HasMaxFragmentID bool
	// DataFileFormat is the table's data file format ("lance").
	DataFileFormat string
	// DataFileVersion is the table's data file version.
	DataFileVersion FileVersion
	// Schema is the table schema of this version.
	Schema *Schema
	// Fragments are the version's fragments, in scan order.
	Fragments []*Fragment
	// Config and TableMetadata are the table's config and user metadata.
	Config, TableMetadata map[string]string
	// TransactionFile is the transaction's name under _transactions/, or "".
	TransactionFile string
	// WriterLibrary and WriterVersion name the library that committed.
	WriterLibrary, WriterVersion string

	pb          *tablepb.Manifest
	raw         []byte // the whole manifest file
	transaction []byte // inline Transaction bytes, nil when absent
}

// StableRowIDs reports whether the version assigns stable row ids.
func (m *Manifest) StableRowIDs() bool { return m.ReaderFlags&FlagStableRowIDs != 0 }

// LiveRows returns the number of rows visible at this version.
func (m *Manifest) LiveRows() uint64 {
	var n uint64
	for _, f := range m.Fragments {
		n += f.LiveRows()
	}
	return n
}

// Fragment returns the fragment with the given id, or nil.
func (m *Manifest) Fragment(id uint64) *Fragment {
	for _, f := range m.Fragments {
		if f.ID == id {
			return f
		}
	}
	return nil
}

// readManifestFile reads the bytes of the manifest file of ref.
func (t *Table) readManifestFile(ref VersionRef) ([]byte, error) {
	raw, err := vfs.ReadObject(t.objs, t.path(versionsDir, ref.File))
	if err != nil {
		return nil, t.wrap(ref.Version, "read manifest "+ref.File, err)
	}
	return raw, nil
}

// decodeCached decodes raw, read from the manifest file of ref whose file
// info is info, and caches the result when raw is the whole file.
func (t *Table) decodeCached(ref VersionRef, info fs.FileInfo, raw []byte) (*Manifest, error) {
	m, err := decodeManifestWith(raw, &t.frags)
	if err != nil {
		return nil, t.wrap(ref.Version, "decode manifest "+ref.File, err)
	}
	m.File = ref.File
	if m.Version != ref.Version {
		return nil, t.versionMismatch(ref, m.Version)
	}
	if int64(len(raw)) == info.Size() {
		t.cache.put(keyOf(ref.File, info), m)
	}
	return m, nil
}

// versionMismatch is the error of a manifest file of ref that holds
// version v.
func (t *Table) versionMismatch(ref VersionRef, v uint64) error {
	return t.errorf(ref.Version, "decode manifest "+ref.File, "%w: file name says version %d, manifest says %d", ErrCorrupt, ref.Version, v)
}

// decodeManifest decodes the bytes of a manifest file. It validates the
// framing, refuses unknown reader feature flags and converts every section a
// reader needs. It never reads other files.
func decodeManifest(raw []byte) (*Manifest, error) {
	return decodeManifestWith(raw, nil)
}

// decodeManifestWith is decodeManifest reusing the fragments memo holds
// (nil: none).
func decodeManifestWith(raw []byte, memo *fragmentMemo) (*Manifest, error) {
	section, err := manifestSection(raw)
	if err != nil {
		return nil, err
	}
	pb := &tablepb.Manifest{}
	var frags [][]byte
	if memo != nil {
		frags, err = memo.decode(section, pb)
	} else {
		err = proto.Unmarshal(section, pb)
	}
	if err != nil {
		return nil, corruptf("manifest protobuf: %v", err)
	}
	return newManifest(pb, raw, section, frags, memo)
}

// newManifest builds the Manifest of pb, decoded from (or encoded as) the
// manifest file raw whose Manifest section is section; frags are the
// fragments' encodings in section if the caller has them (nil: found
// here). A commit uses it for the manifest it just wrote, whose message it
// already has. Fragment messages memo converted before are shared with
// the manifests holding them, and memo keeps the ones built (nil: no memo).
func newManifest(pb *tablepb.Manifest, raw, section []byte, frags [][]byte, memo *fragmentMemo) (*Manifest, error) {
	var err error
	if err := checkReaderFlags(pb.GetReaderFeatureFlags()); err != nil {
		return nil, err
	}
	m := &Manifest{
		Version:          pb.GetVersion(),
		ReaderFlags:      pb.GetReaderFeatureFlags(),
		WriterFlags:      pb.GetWriterFeatureFlags(),
		NextRowID:        pb.GetNextRowId(),
		MaxFragmentID:    pb.GetMaxFragmentId(),
		HasMaxFragmentID: pb.MaxFragmentId != nil,
		DataFileFormat:   pb.GetDataFormat().GetFileFormat(),
		DataFileVersion:  FileVersion(pb.GetDataFormat().GetVersion()),
		Config:           pb.GetConfig(),
		TableMetadata:    pb.GetTableMetadata(),
		TransactionFile:  pb.GetTransactionFile(),
		WriterLibrary:    pb.GetWriterVersion().GetLibrary(),
		WriterVersion:    pb.GetWriterVersion().GetVersion(),
		pb:               pb,
		raw:              raw,
	}
	if m.Version == 0 {
		return nil, corruptf("manifest has version 0")
	}
	if ts := pb.GetTimestamp(); ts != nil {
		m.Timestamp = ts.AsTime()
	}
	if len(pb.GetBasePaths()) > 0 {
		return nil, unsupportedf("manifest lists %d external base paths", len(pb.GetBasePaths()))
	}
	if m.Schema = memo.schemaFor(pb.GetFields(), pb.GetSchemaMetadata()); m.Schema == nil {
		if m.Schema, err = format.NewSchema(pb.GetFields(), pb.GetSchemaMetadata()); err != nil {
			return nil, err
		}
		memo.keepSchema(pb.GetFields(), pb.GetSchemaMetadata(), m.Schema)
	}
	memoized := memo.fragments(pb.GetFragments())
	if frags == nil {
		frags = fragmentBytes(section)
	}
	if len(frags) != len(pb.GetFragments()) {
		frags = nil // not what the message holds
	}
	if len(pb.GetFragments()) > 0 {
		m.Fragments = make([]*Fragment, len(pb.GetFragments()))
	}
	var fresh []int // the fragments built here, not shared
	for i, fp := range pb.GetFragments() {
		var f *Fragment
		if memoized != nil {
			f = memoized[i]
		}
		if f == nil {
			if f, err = newFragment(fp); err != nil {
				return nil, fmt.Errorf("fragment %d (index %d): %w", fp.GetId(), i, err)
			}
			f.version = m.Version
			fresh = append(fresh, i)
		}
		if m.HasMaxFragmentID && f.ID > uint64(m.MaxFragmentID) {
			return nil, corruptf("fragment id %d exceeds max_fragment_id %d", f.ID, m.MaxFragmentID)
		}
		m.Fragments[i] = f
	}
	if err := checkUniqueIDs(m.Fragments); err != nil {
		return nil, err
	}
	if frags != nil {
		setFragmentEncodings(m.Fragments, fresh, frags)
	}
	if pb.TransactionSection != nil {
		if m.transaction, err = lengthPrefixed(raw, pb.GetTransactionSection()); err != nil {
			return nil, fmt.Errorf("transaction section: %w", err)
		}
	}
	if pb.IndexSection != nil {
		if _, err = lengthPrefixed(raw, pb.GetIndexSection()); err != nil {
			return nil, fmt.Errorf("index section: %w", err)
		}
	}
	memo.keep(m.Fragments)
	return m, nil
}

// checkUniqueIDs reports a corrupt manifest whose fragments share an id.
// Ids are most often in increasing order already, which proves them
// unique without sorting a copy.
func checkUniqueIDs(frags []*Fragment) error {
	if sortedByID(frags) {
		return nil
	}
	ids := make([]uint64, len(frags))
	for i, f := range frags {
		ids[i] = f.ID
	}
	slices.Sort(ids)
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			return corruptf("fragment id %d appears twice", ids[i])
		}
	}
	return nil
}

// setFragmentEncodings gives the fragments built for a manifest (frags at
// the indices fresh) their encodings, raws (into the manifest file's
// bytes). Where most fragments are shared with an earlier manifest, the
// few new ones get copies in one allocation: a slice would keep the whole
// file alive for as long as the fragment lives, which for a table a
// commit at a time grows is every version's file.
func setFragmentEncodings(frags []*Fragment, fresh []int, raws [][]byte) {
	if 2*len(fresh) >= len(frags) {
		for _, i := range fresh {
			frags[i].raw = slices.Clip(raws[i])
		}
		return
	}
	n := 0
	for _, i := range fresh {
		n += len(raws[i])
	}
	buf := make([]byte, 0, n)
	for _, i := range fresh {
		start := len(buf)
		buf = append(buf, raws[i]...)
		frags[i].raw = buf[start:len(buf):len(buf)]
	}
}

// manifestFragmentsField is the field number of Manifest.fragments.
const manifestFragmentsField = 2

// fragmentBytes returns the encoded DataFragment messages of a Manifest
// protobuf, in order, so that fragments can be compared by their bytes
// (Changes); nil if the bytes do not parse.
func fragmentBytes(section []byte) [][]byte {
	var out [][]byte
	for b := section; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil
		}
		b = b[n:]
		if num == manifestFragmentsField && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil
			}
			out = append(out, v)
			b = b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return nil
		}
		b = b[n:]
	}
	return out
}

// manifestSection returns the Manifest protobuf bytes of a manifest file.
func manifestSection(raw []byte) ([]byte, error) {
	if len(raw) < manifestTailLen+4 {
		return nil, corruptf("manifest file of %d bytes is too short", len(raw))
	}
	tail := raw[len(raw)-manifestTailLen:]
	if !bytes.Equal(tail[12:], []byte(manifestMagic)) {
		return nil, corruptf("manifest file does not end with %q", manifestMagic)
	}
	major := binary.LittleEndian.Uint16(tail[8:])
	minor := binary.LittleEndian.Uint16(tail[10:])
	if major != manifestMajor || minor != manifestMinor {
		return nil, unsupportedf("manifest file version %d.%d (expected %d.%d)", major, minor, manifestMajor, manifestMinor)
	}
	pos := int64(binary.LittleEndian.Uint64(tail[:8]))
	end := int64(len(raw) - manifestTailLen)
	if pos < 0 || pos+4 > end {
		return nil, corruptf("manifest position %d outside a file of %d bytes", pos, len(raw))
	}
	n := int64(binary.LittleEndian.Uint32(raw[pos:]))
	if pos+4+n != end {
		return nil, corruptf("manifest section at %d has length %d, but the file leaves %d bytes", pos, n, end-pos-4)
	}
	return raw[pos+4 : pos+4+n], nil
}

// lengthPrefixed returns the u32-length-prefixed section at off.
func lengthPrefixed(raw []byte, off uint64) ([]byte, error) {
	if off > uint64(len(raw)) || uint64(len(raw))-off < 4 {
		return nil, corruptf("section offset %d outside a file of %d bytes", off, len(raw))
	}
	n := uint64(binary.LittleEndian.Uint32(raw[off:]))
	if n > uint64(len(raw))-off-4 {
		return nil, corruptf("section at %d has length %d past the end of a %d-byte file", off, n, len(raw))
	}
	return raw[off+4 : off+4+n], nil
}
