package lance_test

import (
	"context"
	"io"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// TestReadRowsAfterOneRowCommitDecodesOnlyNewFragment checks that reading
// the row a one-row append added, from a table of many one-row fragments,
// decodes the new fragment's row-id sequence only: the others are shared
// with the version read before. Decoding every fragment made a refresh's
// cost follow the source's fragment count (issue 22).
func TestReadRowsAfterOneRowCommitDecodesOnlyNewFragment(t *testing.T) {
	ctx := context.Background()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	ls, err := lance.NewSchemaFromArrow(schema)
	if err != nil {
		t.Fatal(err)
	}
	batch := func(v int64) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		b.Field(0).(*array.Int64Builder).Append(v)
		return b.NewRecordBatch()
	}
	write := func(root string, v int64) []lance.NewFragment {
		rec := batch(v)
		defer rec.Release()
		fs, err := datawriter.WriteFragments(vfs.OS(), root, ls, "2.2", []arrow.RecordBatch{rec})
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}
	const frags = 200
	root := t.TempDir() + "/t.lance"
	var all []lance.NewFragment
	for i := range int64(frags) {
		all = append(all, write(root, i)...)
	}
	tbl, _, err := lance.Create(ctx, vfs.OS(), root, lance.CreateOptions{Schema: ls, Fragments: all})
	if err != nil {
		t.Fatal(err)
	}
	readID := func(id uint64) int64 {
		t.Helper()
		snap, err := tbl.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := snap.ReadRows(ctx, roaring64.BitmapOf(id), lance.ScanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer rd.Close()
		var got []int64
		for {
			rec, err := rd.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, rec.Column(0).(*array.Int64).Int64Values()...)
			rec.Release()
		}
		if len(got) != 1 {
			t.Fatalf("row id %d read %v", id, got)
		}
		return got[0]
	}
	if got := readID(frags - 1); got != frags-1 {
		t.Fatalf("last row reads %d", got)
	}
	for i := int64(frags); i < frags+5; i++ {
		m, err := tbl.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.Commit(ctx, m, &lance.Commit{Fragments: write(root, i)}); err != nil {
			t.Fatal(err)
		}
		before := lance.RowIDDecodes(tbl)
		if got := readID(uint64(i)); got != i {
			t.Fatalf("row id %d reads %d", i, got)
		}
		if n := lance.RowIDDecodes(tbl) - before; n > 1 {
			t.Fatalf("reading the row of a one-row append to %d fragments decoded %d row-id sequences, want at most 1", i, n)
		}
	}
}
