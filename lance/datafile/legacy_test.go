package datafile

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance/internal/format"
)

// legacySeed is a 5-row data file LanceDB 0.39 wrote in Lance file format
// 0.1 (testdata/lancedb/types.mjs, every type it writes there).
const legacySeed = "testdata/types_legacy_5rows.lance"

func readLegacySeed(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(legacySeed)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// legacyParts splits a legacy file into what FuzzLegacyMetadata mutates:
// the bytes from the page table to the schema (page table, statistics,
// dictionaries), the schema message and the metadata message. joinLegacy
// reassembles them behind the pages.
func legacyParts(t testing.TB, b []byte) (pages, table, schema, meta []byte) {
	t.Helper()
	metaPos := binary.LittleEndian.Uint64(b[len(b)-16:])
	n := binary.LittleEndian.Uint32(b[metaPos:])
	meta = b[metaPos+4 : metaPos+4+uint64(n)]
	md, err := parseLegacyMetadata(meta)
	if err != nil {
		t.Fatal(err)
	}
	n = binary.LittleEndian.Uint32(b[md.manifestPos:])
	schema = b[md.manifestPos+4 : md.manifestPos+4+uint64(n)]
	return b[:md.pageTablePos], b[md.pageTablePos:md.manifestPos], schema, meta
}

func joinLegacy(pages, table, schema, meta []byte, minor uint16) []byte {
	out := append(append([]byte(nil), pages...), table...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(schema)))
	out = append(out, schema...)
	metaPos := uint64(len(out))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(meta)))
	out = append(out, meta...)
	out = binary.LittleEndian.AppendUint64(out, metaPos)
	out = binary.LittleEndian.AppendUint16(out, 0)
	out = binary.LittleEndian.AppendUint16(out, minor)
	return append(out, "LANC"...)
}

// TestLegacyParts checks the fuzz target's reassembly: unchanged parts give
// back the file byte for byte.
func TestLegacyParts(t *testing.T) {
	b := readLegacySeed(t)
	pages, table, schema, meta := legacyParts(t, b)
	if got := joinLegacy(pages, table, schema, meta, 2); !bytes.Equal(got, b) {
		t.Fatalf("reassembled %d bytes differ from the file's %d", len(got), len(b))
	}
}

// FuzzLegacyMetadata: a legacy file with any page table, schema message,
// metadata message and footer version either decodes or gives an error;
// never a panic, never a huge allocation.
func FuzzLegacyMetadata(f *testing.F) {
	b := readLegacySeed(f)
	pages, table, schema, meta := legacyParts(f, b)
	f.Add(table, schema, meta, uint16(2))
	f.Add(table, schema, meta, uint16(1))
	f.Add(table[:len(table)/2], schema, meta, uint16(2))
	f.Fuzz(func(t *testing.T, table, schema, meta []byte, minor uint16) {
		file := joinLegacy(pages, table, schema, meta, minor)
		r, err := openLimited(bytes.NewReader(file), int64(len(file)), "fuzz", fuzzLimits)
		if err != nil {
			return
		}
		if r.NumRows() > 1<<16 {
			return
		}
		_ = readAll(r, 1<<12)
		for _, fl := range r.Schema().Fields {
			dt, err := fl.ArrowType()
			if err != nil || r.NumRows() == 0 {
				continue
			}
			if a, _, _, err := r.ReadFieldChunk(context.Background(), fl.ID, dt, r.NumRows()-1, 10, memory.DefaultAllocator); err == nil {
				a.Release()
			}
		}
	})
}

// TestLegacyUnsupported checks that what the legacy reader does not read
// is refused as unsupported, naming the format, never read as something
// else.
func TestLegacyUnsupported(t *testing.T) {
	b := readLegacySeed(t)
	r, err := Open(bytes.NewReader(b), int64(len(b)), legacySeed)
	if err != nil {
		t.Fatal(err)
	}
	f := r.Schema().FieldByName("i32")
	if f == nil {
		t.Fatal("no field i32 in the seed")
	}
	_, err = r.ReadField(context.Background(), f.ID, arrow.SparseUnionOf(nil, nil), 0, 1, memory.DefaultAllocator)
	if !errors.Is(err, format.ErrUnsupported) || !strings.Contains(err.Error(), legacyUnsupported) {
		t.Fatalf("reading int32 as a union: %v, want ErrUnsupported naming %q", err, legacyUnsupported)
	}
	// A file that does not describe its own schema.
	pages, table, schema, meta := legacyParts(t, b)
	var noSchema []byte
	md, _ := parseLegacyMetadata(meta)
	noSchema = binary.AppendUvarint(noSchema, 2<<3|2) // batch_offsets, packed
	var offs []byte
	for _, o := range md.batchOffsets {
		offs = binary.AppendUvarint(offs, uint64(o))
	}
	noSchema = binary.AppendUvarint(noSchema, uint64(len(offs)))
	noSchema = append(noSchema, offs...)
	noSchema = binary.AppendUvarint(noSchema, 3<<3|0)
	noSchema = binary.AppendUvarint(noSchema, md.pageTablePos)
	file := joinLegacy(pages, table, schema, noSchema, 2)
	_, err = Open(bytes.NewReader(file), int64(len(file)), "no-schema")
	if !errors.Is(err, format.ErrUnsupported) || !strings.Contains(err.Error(), legacyUnsupported) {
		t.Fatalf("a file without its schema: %v, want ErrUnsupported naming %q", err, legacyUnsupported)
	}
	if md.manifestPos == 0 || len(md.batchOffsets) < 2 {
		t.Fatalf("seed metadata %+v lacks a schema or batches", md)
	}
}
