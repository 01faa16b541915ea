package lance_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/s3fs/s3fstest"
)

// scanIDs reads the id column of the latest version through a new handle.
func scanIDs(t *testing.T, fsys vfs.FS, root string) []int64 {
	t.Helper()
	ctx := context.Background()
	tbl, err := lance.Open(ctx, fsys, root)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := snap.Scan(ctx, lance.ScanOptions{Columns: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var ids []int64
	for {
		rec, err := sc.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.Column(0).(*array.Int64).Int64Values()...)
		rec.Release()
	}
	slices.Sort(ids)
	return ids
}

// TestTableOnS3: a table created, appended to (by racing writers, whose
// losers go through the conflict path and retry), deleted from and read
// back, all on an S3 endpoint, as on local disk.
func TestTableOnS3(t *testing.T) {
	ctx := context.Background()
	srv := s3fstest.Start(t, "b")
	fsys := srv.FS(t, "b")
	const root = "db/base.lance"
	schema, err := lance.NewSchemaFromArrow(baseSchema)
	if err != nil {
		t.Fatal(err)
	}
	frags, err := datawriter.WriteFragments(fsys, root, schema, lance.DefaultFileVersion, []arrow.RecordBatch{baseRecord(idRange(0, 10))})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := lance.Create(ctx, fsys, root, lance.CreateOptions{Schema: schema, Fragments: frags}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := lance.Create(ctx, fsys, root, lance.CreateOptions{Schema: schema, Fragments: frags}); !errors.Is(err, lance.ErrConflict) {
		t.Fatalf("second Create: %v; want ErrConflict", err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			ids := idRange(int64(100*(w+1)), int64(100*(w+1)+5))
			for {
				tbl, err := lance.Open(ctx, fsys, root)
				if err != nil {
					t.Error(err)
					return
				}
				snap, err := tbl.Latest(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				fr, err := datawriter.WriteFragments(fsys, root, snap.Schema, snap.DataFileVersion, []arrow.RecordBatch{baseRecord(ids)})
				if err != nil {
					t.Error(err)
					return
				}
				_, err = tbl.Commit(ctx, snap, &lance.Commit{Fragments: fr})
				if errors.Is(err, lance.ErrConflict) {
					continue // another appender took the version: retry on the new latest
				}
				if err != nil {
					t.Error(err)
				}
				return
			}
		})
	}
	wg.Wait()
	want := idRange(0, 10)
	for w := range 4 {
		want = append(want, idRange(int64(100*(w+1)), int64(100*(w+1)+5))...)
	}
	if got := scanIDs(t, fsys, root); !slices.Equal(got, want) {
		t.Fatalf("after appends: ids %v, want %v", got, want)
	}
	tbl, err := lance.Open(ctx, fsys, root)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version != 5 {
		t.Fatalf("latest version %d, want 5 (create + 4 appends)", snap.Version)
	}
	if _, err := tbl.Commit(ctx, snap, &lance.Commit{DeleteRowIDs: roaring64.BitmapOf(0, 1, 2)}); err != nil {
		t.Fatal(err)
	}
	if got := scanIDs(t, fsys, root); !slices.Equal(got, want[3:]) {
		t.Fatalf("after the delete: ids %v, want %v", got, want[3:])
	}
}
