package lance_test

import (
	"context"
	"io"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// TestReadRowsOfNewRowsLooksAtNewFragments: reading the rows a one-row
// commit added to a table of many one-row fragments looks at the row ids
// of the last fragments only, not of every fragment before them (the walk
// made a refresh's cost follow the source's fragment count, issue 22);
// reads of rows spread over the table, or of rows not all live, still
// return every live row asked for, in scan order.
func TestReadRowsOfNewRowsLooksAtNewFragments(t *testing.T) {
	ctx := context.Background()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	ls, err := lance.NewSchemaFromArrow(schema)
	if err != nil {
		t.Fatal(err)
	}
	write := func(root string, v int64) []lance.NewFragment {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		b.Field(0).(*array.Int64Builder).Append(v)
		rec := b.NewRecordBatch()
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
	read := func(ids ...uint64) []int64 {
		t.Helper()
		snap, err := tbl.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := snap.ReadRows(ctx, roaring64.BitmapOf(ids...), lance.ScanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer rd.Close()
		var got []int64
		for {
			rec, err := rd.Next(ctx)
			if err == io.EOF {
				return got
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, rec.Column(0).(*array.Int64).Int64Values()...)
			rec.Release()
		}
	}
	commit := func(c *lance.Commit) {
		t.Helper()
		m, err := tbl.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.Commit(ctx, m, c); err != nil {
			t.Fatal(err)
		}
	}
	for i := int64(frags); i < frags+3; i++ {
		commit(&lance.Commit{Fragments: write(root, i)})
		before := lance.RowIDLookups(tbl)
		if got := read(uint64(i)); !slices.Equal(got, []int64{i}) {
			t.Fatalf("row id %d reads %v", i, got)
		}
		if n := lance.RowIDLookups(tbl) - before; n > 3 {
			t.Fatalf("reading the row of a one-row append to %d fragments looked at %d row-id sequences, want at most 3", i, n)
		}
	}
	if got, want := read(frags+2, 0, 100), []int64{0, 100, frags + 2}; !slices.Equal(got, want) {
		t.Fatalf("rows spread over the table read %v, want %v", got, want)
	}
	commit(&lance.Commit{DeleteRowIDs: roaring64.BitmapOf(5)})
	if got, want := read(5, 7, frags+1), []int64{7, frags + 1}; !slices.Equal(got, want) {
		t.Fatalf("rows one of which is deleted read %v, want %v", got, want)
	}
	if got := read(5, 1<<40); len(got) != 0 {
		t.Fatalf("rows none of which is live read %v", got)
	}
}
