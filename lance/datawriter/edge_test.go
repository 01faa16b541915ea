package datawriter_test

import (
	"errors"
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
	for _, version := range []string{"2.2", "2.1", "2.0"} {
		t.Run(version, func(t *testing.T) {
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
				if _, _, err := lance.Create(vfs.OS(), root, lance.CreateOptions{Schema: schema, Fragments: frags, DataFileVersion: version}); err != nil {
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

// TestWideStringsInterop writes strings far larger than a mini-block chunk
// (2.2's large chunks carry them; 2.1 refuses rather than write a file
// LanceDB cannot read).
func TestWideStringsInterop(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	as := arrow.NewSchema([]arrow.Field{{Name: "doc", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	for i := 0; i < 7; i++ {
		b.Field(0).(*array.StringBuilder).Append(strings.Repeat(string(rune('a'+i)), 100_000+i))
	}
	rec := b.NewRecordBatch()
	schema, err := lance.NewSchemaFromArrow(as)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "wide.lance")
	if _, err := datawriter.WriteFragments(vfs.OS(), filepath.Join(t.TempDir(), "w21.lance"), schema, "2.1", []arrow.RecordBatch{rec}); !errors.Is(err, datawriter.ErrUnsupported) {
		t.Fatalf("2.1 with 100 KB strings: err = %v, want ErrUnsupported", err)
	}
	frags, err := datawriter.WriteFragments(vfs.OS(), root, schema, "2.2", []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := lance.Create(vfs.OS(), root, lance.CreateOptions{Schema: schema, Fragments: frags}); err != nil {
		t.Fatal(err)
	}
	got := lanceDBRead(t, root)
	if got.NumRows != 7 {
		t.Fatalf("LanceDB reads %d rows", got.NumRows)
	}
	checkValues(t, rec, 0, got.Data)
}
