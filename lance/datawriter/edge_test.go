package datawriter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// TestDegenerateColumnsInterop writes columns with no visible value at
// all: an all-null scalar, lists that are all null or empty, and a single
// row, in every version.
func TestDegenerateColumnsInterop(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	as := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "nothing", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	}, nil)
	for _, version := range []lance.FileVersion{"2.2", "2.1", "2.0"} {
		t.Run(string(version), func(t *testing.T) {
			t.Parallel()
			for _, rows := range []int{1, 300} {
				b := array.NewRecordBuilder(memory.DefaultAllocator, as)
				for i := 0; i < rows; i++ {
					b.Field(0).(*array.Int64Builder).Append(int64(i))
					b.Field(1).AppendNull()
					b.Field(2).AppendNull()
					if i%2 == 0 {
						b.Field(3).AppendNull()
					} else {
						b.Field(3).(*array.ListBuilder).AppendEmptyValue()
					}
				}
				rec := b.NewRecordBatch()
				b.Release()
				schema, err := lance.NewSchemaFromArrow(as)
				if err != nil {
					t.Fatal(err)
				}
				root := filepath.Join(t.TempDir(), "edge.lance")
				frags, err := datawriter.WriteFragments(vfs.OS(), root, schema, version, []arrow.RecordBatch{rec})
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := lance.Create(context.Background(), vfs.OS(), root, lance.CreateOptions{Schema: schema, Fragments: frags, DataFileVersion: version}); err != nil {
					t.Fatal(err)
				}
				got := lanceDBRead(t, root)
				if got.NumRows != uint64(rows) {
					t.Fatalf("LanceDB reads %d rows, want %d", got.NumRows, rows)
				}
				checkValues(t, rec, 0, got.Data)
			}
		})
	}
}

// TestWideStringsInterop writes strings and fixed-size binaries far larger
// than a mini-block chunk: 2.2's large chunks carry them, 2.1 writes such
// pages full-zip, also under lists and structs, with nulls, empty strings
// and empty lists.
func TestWideStringsInterop(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	as := arrow.NewSchema([]arrow.Field{
		{Name: "doc", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "docs", Type: arrow.ListOf(arrow.BinaryTypes.LargeString), Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true}), Nullable: true},
		{Name: "fsb", Type: &arrow.FixedSizeBinaryType{ByteWidth: 9_000}, Nullable: true},
		{Name: "lfsb", Type: arrow.ListOf(&arrow.FixedSizeBinaryType{ByteWidth: 9_000}), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	for i := 0; i < 40; i++ {
		big := strings.Repeat(string(rune('a'+i%26)), 40_000+i)
		switch i % 5 {
		case 1:
			b.Field(0).AppendNull()
		case 2:
			b.Field(0).(*array.StringBuilder).Append("")
		default:
			b.Field(0).(*array.StringBuilder).Append(big)
		}
		lb := b.Field(1).(*array.ListBuilder)
		switch i % 6 {
		case 0:
			lb.AppendNull()
		case 1:
			lb.AppendEmptyValue()
		default:
			lb.Append(true)
			for j := 0; j < i%4+1; j++ {
				if j == 1 {
					lb.ValueBuilder().AppendNull()
				} else {
					lb.ValueBuilder().(*array.LargeStringBuilder).Append(big[:9_000*j+5])
				}
			}
		}
		sb := b.Field(2).(*array.StructBuilder)
		switch i % 7 {
		case 3:
			sb.AppendNull()
		case 4:
			sb.Append(true)
			sb.FieldBuilder(0).AppendNull()
		default:
			sb.Append(true)
			sb.FieldBuilder(0).(*array.BinaryBuilder).Append([]byte(big[:9_000+i]))
		}
		if i%4 == 1 {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.FixedSizeBinaryBuilder).Append([]byte(big[:9_000]))
		}
		fl := b.Field(4).(*array.ListBuilder)
		switch i % 5 {
		case 0:
			fl.AppendNull()
		case 1:
			fl.AppendEmptyValue()
		default:
			fl.Append(true)
			for j := 0; j < i%3+1; j++ {
				if j == 1 {
					fl.ValueBuilder().AppendNull()
				} else {
					fl.ValueBuilder().(*array.FixedSizeBinaryBuilder).Append([]byte(big[j : j+9_000]))
				}
			}
		}
	}
	rec := b.NewRecordBatch()
	b.Release()
	schema, err := lance.NewSchemaFromArrow(as)
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []lance.FileVersion{"2.2", "2.1"} {
		t.Run(string(version), func(t *testing.T) {
			t.Parallel()
			root := filepath.Join(t.TempDir(), "wide.lance")
			frags, err := datawriter.WriteFragments(vfs.OS(), root, schema, version, []arrow.RecordBatch{rec})
			if err != nil {
				t.Fatal(err)
			}
			readBackGo(t, root, schema, frags[0].Files[0], rec)
			if _, _, err := lance.Create(context.Background(), vfs.OS(), root, lance.CreateOptions{Schema: schema, Fragments: frags, DataFileVersion: version}); err != nil {
				t.Fatal(err)
			}
			got := lanceDBRead(t, root)
			if got.NumRows != 40 {
				t.Fatalf("LanceDB reads %d rows", got.NumRows)
			}
			checkValues(t, rec, 0, got.Data)
			// A slice in the middle reads rows through the repetition index.
			out := lancedbtest.RunNode(t, "interop.mjs", "slice", root, "13", "9")
			var part lanceDBTable
			if err := json.Unmarshal(out, &part); err != nil {
				t.Fatal(err)
			}
			if len(part.Data) != 9 {
				t.Fatalf("LanceDB returns %d rows of the slice", len(part.Data))
			}
			checkValues(t, rec.NewSlice(13, 22), 0, part.Data)
		})
	}
}

// TestSparseListsInterop writes list pages whose rows are nearly all null
// or empty lists: their levels have no values to share chunks with, so
// the writer cuts smaller pages (a chunk counts levels in u16). LanceDB
// and mvd's reader must read every row.
func TestSparseListsInterop(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	as := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int32},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "ll", Type: arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int32)), Nullable: true},
	}, nil)
	const rows = 80_000
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	for i := 0; i < rows; i++ {
		b.Field(0).(*array.Int32Builder).Append(int32(i))
		tb := b.Field(1).(*array.ListBuilder)
		lb := b.Field(2).(*array.ListBuilder)
		switch {
		case i < 50_000:
			tb.AppendNull()
			lb.Append(true)
			inner := lb.ValueBuilder().(*array.ListBuilder)
			inner.AppendEmptyValue()
			inner.AppendNull()
		case i < 70_000:
			tb.AppendEmptyValue()
			lb.AppendNull()
		default:
			tb.Append(true)
			tb.ValueBuilder().(*array.StringBuilder).Append(fmt.Sprint("t", i))
			lb.Append(true)
			inner := lb.ValueBuilder().(*array.ListBuilder)
			inner.Append(true)
			inner.ValueBuilder().(*array.Int32Builder).Append(int32(i))
		}
	}
	rec := b.NewRecordBatch()
	b.Release()
	schema, err := lance.NewSchemaFromArrow(as)
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []lance.FileVersion{"2.2", "2.1"} { // 2.0 has no chunks
		t.Run(string(version), func(t *testing.T) {
			t.Parallel()
			root := filepath.Join(t.TempDir(), "sparse.lance")
			frags, err := datawriter.WriteFragments(vfs.OS(), root, schema, version, []arrow.RecordBatch{rec})
			if err != nil {
				t.Fatal(err)
			}
			readBackGo(t, root, schema, frags[0].Files[0], rec)
			if _, _, err := lance.Create(context.Background(), vfs.OS(), root, lance.CreateOptions{Schema: schema, Fragments: frags, DataFileVersion: version}); err != nil {
				t.Fatal(err)
			}
			for _, at := range []int{0, 32_700, 49_990, 69_990, rows - 30} {
				out := lancedbtest.RunNode(t, "interop.mjs", "slice", root, fmt.Sprint(at), "30")
				var got lanceDBTable
				if err := json.Unmarshal(out, &got); err != nil {
					t.Fatal(err)
				}
				if got.NumRows != rows || len(got.Data) != 30 {
					t.Fatalf("LanceDB counts %d rows and returns %d from %d", got.NumRows, len(got.Data), at)
				}
				checkValues(t, rec.NewSlice(int64(at), int64(at+30)), 0, got.Data)
			}
		})
	}
}
