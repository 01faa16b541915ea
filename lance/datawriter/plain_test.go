package datawriter_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// TestPlainTable appends to a LanceDB table without stable row ids (no row
// id sequences are written) and refuses deletes by row id there; creating
// a table where one exists is a conflict.
func TestPlainTable(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	root := filepath.Join(t.TempDir(), "plain.lance")
	if err := os.CopyFS(root, os.DirFS(filepath.Join(lancedbtest.FixturesDir(t), "history_plain_v22.lance"))); err != nil {
		t.Fatal(err)
	}
	tbl, err := lance.Open(context.Background(), vfs.OS(), root)
	if err != nil {
		t.Fatal(err)
	}
	tt := &testTable{t: t, root: root, tbl: tbl}
	before := lanceDBRead(t, root)
	m := tt.commit(0, &lance.Commit{Fragments: tt.write(idRange(70000, 70010))})
	if m.StableRowIDs() || m.NextRowID != 0 {
		t.Fatalf("append to a plain table: flags %v, next_row_id %d", lance.FlagNames(m.ReaderFlags), m.NextRowID)
	}
	after := lanceDBRead(t, root)
	if after.NumRows != before.NumRows+10 || !slices.Equal(viewIDs(t, after)[before.NumRows:], idRange(70000, 70010)) {
		t.Fatalf("LanceDB reads %d rows after the append", after.NumRows)
	}
	checkRowMeta(t, tbl, after)
	if _, err := tbl.Commit(context.Background(), mustAt(t, tbl, 0), &lance.Commit{DeleteRowIDs: roaring64.BitmapOf(1)}); !errors.Is(err, lance.ErrNoStableRowIDs) {
		t.Fatalf("delete by row id on a plain table: err = %v", err)
	}
	if _, _, err := lance.Create(context.Background(), vfs.OS(), root, lance.CreateOptions{Schema: m.Schema}); !errors.Is(err, lance.ErrConflict) {
		t.Fatalf("create over an existing table: err = %v", err)
	}
}
