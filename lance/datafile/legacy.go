package datafile

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/mvd-project/mvd/lance/internal/format"
	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// Lance file format 0.1 ("legacy", data_storage_version "legacy", the
// default before 2.0; its footer says 0.1 or 0.2) lays a file out as:
//
//	pages ... | page table | statistics | dictionaries | manifest | metadata | footer
//
// The 16-byte footer holds the metadata's position (u64), the version
// (u16 major 0, u16 minor) and "LANC". The metadata (a u32 length, then a
// lance.file.Metadata message) gives the batches' row offsets and the
// page table's position; the manifest (a u32 length, then a
// lance.table.Manifest holding only the schema) is the file's own schema,
// whose dictionaries point into the file. Every write of a batch adds one
// page per field that has data (not structs), and the page table is an
// int64 (position, length) pair per field id from the schema's smallest to
// the largest with a page, batch by batch.
//
// Pages are plain: fixed-width values (booleans as bits) back to back; a
// string or binary page is its bytes followed by length+1 int64 absolute
// file positions (the page's position is that of the positions); a list's
// page is length int32 (int64 for large lists) offsets, relative to its
// batch, of the item field's page; a dictionary's page holds its keys.
// There are no validity bitmaps: LanceDB reads nulls of every type but
// strings and binaries back as the value stored in their slot (zero, as
// Arrow writers leave it), and an empty string or binary of a nullable
// field as null. This reader returns exactly what LanceDB 0.39 returns.

// legacyFooterSize is the size of the format 0.1 footer.
const legacyFooterSize = 16

// legacyUnsupported is the prefix of every "not supported" error about
// legacy files, so a user sees which format is at stake.
const legacyUnsupported = "unsupported: Lance file format 0.1 (legacy)"

// legacyUnsupportedErr is unsupportedErr for legacy files.
func legacyUnsupportedErr(f string, args ...any) error {
	return unsupportedErr(legacyUnsupported+": "+f, args...)
}

// legacyFile is what Open reads of a format 0.1 file.
type legacyFile struct {
	minor int
	// batches holds the first row of every batch and the row count last.
	batches []uint64
	// minID is the page table's first field id.
	minID int32
	// numIDs is the number of field ids the page table covers.
	numIDs int64
	// pages holds (position, length) per field id and batch:
	// pages[(id-minID)*len(batches-1) + batch].
	pages []span
	// fields is the file's own schema, by id (dictionaries, nullability).
	fields map[int32]*tablepb.Field
}

// isLegacyFooter reports whether the last 16 bytes of a file are a format
// 0.1 footer. Every Lance footer ends with the version and "LANC", so the
// version alone tells the formats apart (2.0 files say 0.3).
func isLegacyFooter(tail []byte) bool {
	if len(tail) != legacyFooterSize || string(tail[12:]) != "LANC" {
		return false
	}
	major, minor := binary.LittleEndian.Uint16(tail[8:]), binary.LittleEndian.Uint16(tail[10:])
	return major == 0 && (minor == 1 || minor == 2)
}

// legacyMetadata is the decoded lance.file.Metadata message.
type legacyMetadata struct {
	manifestPos  uint64
	batchOffsets []int64
	pageTablePos uint64
}

// parseLegacyMetadata decodes lance.file.Metadata by hand (fields 1:
// manifest_position, 2: batch_offsets, 3: page_table_position; others, the
// statistics, are skipped).
func parseLegacyMetadata(b []byte) (legacyMetadata, error) {
	var m legacyMetadata
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return m, fmt.Errorf("decode metadata: %w", protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case (num == 1 || num == 3) && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return m, fmt.Errorf("decode metadata field %d: %w", num, protowire.ParseError(n))
			}
			b = b[n:]
			if num == 1 {
				m.manifestPos = v
			} else {
				m.pageTablePos = v
			}
		case num == 2 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return m, fmt.Errorf("decode batch offsets: %w", protowire.ParseError(n))
			}
			b = b[n:]
			m.batchOffsets = append(m.batchOffsets, int64(int32(v)))
		case num == 2 && typ == protowire.BytesType:
			p, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return m, fmt.Errorf("decode batch offsets: %w", protowire.ParseError(n))
			}
			b = b[n:]
			for len(p) > 0 {
				v, k := protowire.ConsumeVarint(p)
				if k < 0 {
					return m, fmt.Errorf("decode batch offsets: %w", protowire.ParseError(k))
				}
				p = p[k:]
				m.batchOffsets = append(m.batchOffsets, int64(int32(v)))
			}
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return m, fmt.Errorf("decode metadata field %d: %w", num, protowire.ParseError(n))
			}
			b = b[n:]
		}
	}
	return m, nil
}

// readLengthPrefixed reads the u32-length-prefixed message at pos, which
// must end at or before end.
func readLengthPrefixed(r io.ReaderAt, pos, end uint64, what string) ([]byte, error) {
	if pos > end || end-pos < 4 {
		return nil, fmt.Errorf("%s at %d is outside the file's metadata (which ends at %d)", what, pos, end)
	}
	var lb [4]byte
	if _, err := r.ReadAt(lb[:], int64(pos)); err != nil {
		return nil, fmt.Errorf("read %s length: %w", what, storageErr(err))
	}
	n := uint64(binary.LittleEndian.Uint32(lb[:]))
	if n > end-pos-4 {
		return nil, fmt.Errorf("%s at %d claims %d bytes, only %d are left", what, pos, n, end-pos-4)
	}
	b := make([]byte, n)
	if _, err := r.ReadAt(b, int64(pos+4)); err != nil {
		return nil, fmt.Errorf("read %s: %w", what, storageErr(err))
	}
	return b, nil
}

// openLegacy reads a format 0.1 file whose footer (the last 16 bytes) is
// tail: metadata, the file's own schema and the page table.
func openLegacy(r io.ReaderAt, size int64, name string, tail []byte, lim limits) (*Reader, error) {
	metaPos := binary.LittleEndian.Uint64(tail)
	end := uint64(size) - legacyFooterSize
	mb, err := readLengthPrefixed(r, metaPos, end, "metadata")
	if err != nil {
		return nil, err
	}
	md, err := parseLegacyMetadata(mb)
	if err != nil {
		return nil, err
	}
	lf := &legacyFile{minor: int(binary.LittleEndian.Uint16(tail[10:]))}
	if len(md.batchOffsets) > 0 && md.batchOffsets[0] != 0 {
		return nil, fmt.Errorf("first batch starts at row %d, not 0", md.batchOffsets[0])
	}
	for i, o := range md.batchOffsets {
		if o < 0 || (i > 0 && o < md.batchOffsets[i-1]) {
			return nil, fmt.Errorf("batch offsets out of order at batch %d (%d)", i, o)
		}
		lf.batches = append(lf.batches, uint64(o))
	}
	if len(lf.batches) == 0 {
		lf.batches = []uint64{0}
	}
	if md.manifestPos == 0 {
		return nil, legacyUnsupportedErr("the file does not describe its own schema")
	}
	manb, err := readLengthPrefixed(r, md.manifestPos, metaPos, "schema")
	if err != nil {
		return nil, err
	}
	var man tablepb.Manifest
	if err := proto.Unmarshal(manb, &man); err != nil {
		return nil, fmt.Errorf("decode schema: %w", err)
	}
	schema, err := format.NewSchema(man.GetFields(), man.GetSchemaMetadata())
	if err != nil {
		return nil, fmt.Errorf("file schema: %w", err)
	}
	lf.fields = make(map[int32]*tablepb.Field, len(man.GetFields()))
	for _, f := range man.GetFields() {
		lf.fields[f.GetId()] = f
	}
	if err := lf.readPageTable(r, schema, md.pageTablePos, metaPos, uint64(size)); err != nil {
		return nil, err
	}
	return &Reader{
		r: r, size: size, name: name, major: 0, minor: lf.minor,
		numRows: lf.batches[len(lf.batches)-1], schema: schema,
		limits: lim, legacy: lf,
	}, nil
}

// readPageTable reads the page table at pos: one (position, length) pair
// per field id from the schema's smallest to the largest of a field with
// pages (not a struct, not a fixed-size list's item), for every batch.
func (lf *legacyFile) readPageTable(r io.ReaderAt, schema *format.Schema, pos, end, size uint64) error {
	flat := schema.Flatten()
	if len(flat) == 0 {
		return nil
	}
	minID, maxID := int32(math.MaxInt32), int32(-1)
	for _, f := range flat {
		minID = min(minID, f.ID)
		if f.IsStruct() {
			continue
		}
		if p := schema.FieldByID(f.ParentID); p != nil && !p.IsStruct() && !p.IsList() {
			continue // the item of a fixed-size list is stored with its list
		}
		maxID = max(maxID, f.ID)
	}
	nb := int64(len(lf.batches) - 1)
	if maxID < minID || nb == 0 {
		return nil
	}
	lf.minID, lf.numIDs = minID, int64(maxID)-int64(minID)+1
	if lf.numIDs > int64(size)/16/nb+1 {
		return fmt.Errorf("page table for field ids %d..%d and %d batches does not fit in the file", minID, maxID, nb)
	}
	n := uint64(lf.numIDs * nb)
	if pos > end || n*16 > end-pos {
		return fmt.Errorf("page table at %d (%d entries) runs past the metadata at %d", pos, n, end)
	}
	b := make([]byte, n*16)
	if _, err := r.ReadAt(b, int64(pos)); err != nil {
		return fmt.Errorf("read page table: %w", storageErr(err))
	}
	lf.pages = make([]span, n)
	for i := range lf.pages {
		lf.pages[i] = span{binary.LittleEndian.Uint64(b[16*i:]), binary.LittleEndian.Uint64(b[16*i+8:])}
		if lf.pages[i].pos > size {
			return fmt.Errorf("page table entry %d points at %d, past the file's %d bytes", i, lf.pages[i].pos, size)
		}
	}
	return nil
}

// page returns the (position, length) of field id's page in batch b.
func (lf *legacyFile) page(id int32, b int) (span, error) {
	nb := int64(len(lf.batches) - 1)
	k := int64(id) - int64(lf.minID)
	if k < 0 || k >= lf.numIDs || b < 0 || int64(b) >= nb {
		return span{}, fmt.Errorf("no page for field %d batch %d in the page table", id, b)
	}
	return lf.pages[k*nb+int64(b)], nil
}

// batchOf returns the batch holding row x (x below the row count).
func (lf *legacyFile) batchOf(x uint64) int {
	lo, hi := 0, len(lf.batches)-2
	for lo < hi {
		m := (lo + hi + 1) / 2
		if lf.batches[m] <= x {
			lo = m
		} else {
			hi = m - 1
		}
	}
	return lo
}
