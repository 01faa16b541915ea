package datawriter_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// TestBitPackedIntegersInterop writes integer columns that 2.2 files
// store bit-packed — every width from 0 to 63 bits across chunks, nulls,
// a short last chunk, 8 to 64-bit types — and columns that stay flat
// (negative values need every bit); mvd's reader and LanceDB read every
// value back, and the packed file is smaller than the flat one (2.1).
func TestBitPackedIntegersInterop(t *testing.T) {
	as := arrow.NewSchema([]arrow.Field{
		{Name: "ramp", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "neg", Type: arrow.PrimitiveTypes.Int64},
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		{Name: "i16", Type: arrow.PrimitiveTypes.Int16},
		{Name: "u8", Type: arrow.PrimitiveTypes.Uint8},
	}, nil)
	schema, err := lance.NewSchemaFromArrow(as)
	if err != nil {
		t.Fatal(err)
	}
	const n = 64*1024 + 777
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	for i := range n {
		// Chunk c (1024 values) of ramp needs c%64 bits: 0 first.
		c := i / 1024
		v := uint64(0)
		if w := c % 64; w > 0 {
			v = uint64(i)*0x9E3779B97F4A7C15>>(64-w) | 1<<(w-1)
		}
		b.Field(0).(*array.Uint64Builder).Append(v)
		if i%11 == 4 {
			b.Field(1).AppendNull()
			b.Field(3).AppendNull()
		} else {
			b.Field(1).(*array.Int64Builder).Append(int64(5_000_000 + i))
			b.Field(3).(*array.Uint32Builder).Append(uint32(i % 70000))
		}
		b.Field(2).(*array.Int64Builder).Append(int64(i) - n/2)
		b.Field(4).(*array.Int16Builder).Append(int16(i % 300))
		b.Field(5).(*array.Uint8Builder).Append(uint8(i % 5))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var size [2]uint64
	for k, version := range []lance.FileVersion{"2.2", "2.1"} {
		root := filepath.Join(t.TempDir(), "p.lance")
		frags, err := datawriter.WriteFragments(vfs.OS(), root, schema, version, []arrow.RecordBatch{rec.NewSlice(0, 40_000), rec.NewSlice(40_000, n)})
		if err != nil {
			t.Fatal(err)
		}
		size[k] = frags[0].Files[0].SizeBytes
		readBackGo(t, root, schema, frags[0].Files[0], rec)
		if version != "2.2" {
			continue
		}
		t.Run("lancedb", func(t *testing.T) {
			lancedbtest.Require(t)
			if _, _, err := lance.Create(context.Background(), vfs.OS(), root, lance.CreateOptions{Schema: schema, Fragments: frags, DataFileVersion: version}); err != nil {
				t.Fatal(err)
			}
			got := lanceDBRead(t, root)
			if got.NumRows != n || len(got.Data) != n {
				t.Fatalf("LanceDB reads %d rows (%d in the scan), want %d", got.NumRows, len(got.Data), n)
			}
			checkValues(t, rec, 0, got.Data)
		})
	}
	// Flat, the columns take 8+8+8+4+2+1 bytes a row; packed, ramp takes
	// 31.5 bits on average, id 23, u32 17, i16 9, u8 3 (neg stays flat).
	if flat, packed := size[1], size[0]; float64(packed) > 0.7*float64(flat) || flat < 31*n {
		t.Errorf("2.2 file of %d bytes, 2.1 (flat) %d: the integers were not bit-packed", packed, flat)
	}
}
