package lance_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// rwRewrite rewrites the fragments ids of s (consecutive) into new
// fragments holding their live rows, as a compaction does, and commits it.
func rwRewrite(t *testing.T, tbl *lance.Table, s *lance.Snapshot, ids []uint64, c *lance.Commit) (*lance.Snapshot, error) {
	t.Helper()
	ctx := context.Background()
	sc, err := s.Scan(ctx, lance.ScanOptions{Fragments: ids})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	w := datawriter.NewFragmentWriter(vfs.OS(), tbl.Root(), s.Schema, s.DataFileVersion)
	for {
		rec, err := sc.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		err = w.Write(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	frags, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if c == nil {
		c = &lance.Commit{}
	}
	c.Rewrite = []lance.RewriteGroup{{Old: ids, New: frags}}
	return tbl.Commit(ctx, s, c)
}

// TestRewriteKeepsRowIdentity compacts a LanceDB table's fragments (one
// with deletions, appends of one row each) into one and checks that every
// live row keeps its stable row id and both row versions, as LanceDB reads
// them, that the change set across the rewrite is empty, that LanceDB
// sees a rewrite transaction and keeps writing on top, and that a
// rewrite of fragments another commit changed meanwhile is refused.
func TestRewriteKeepsRowIdentity(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	ctx := context.Background()
	root := wrCopyFixture(t, "history_stable_v22")
	tbl := wrOpenTable(t, root)
	// Small appends and a delete, so that there is something to compact.
	s := wrCheckout(t, tbl, 13)
	if _, err := tbl.Commit(ctx, s, &lance.Commit{DeleteRowIDs: roaring64.BitmapOf(12100, 12105, 14000)}); err != nil {
		t.Fatal(err)
	}
	v := wrLanceDBOps(t, root, map[string]any{"op": "add", "ids": []int{90001}},
		map[string]any{"op": "add", "ids": []int{90002}})
	before := wrLanceDBRead(t, root, v)
	s = wrCheckout(t, tbl, v)
	var ids []uint64
	for _, f := range s.Fragments {
		ids = append(ids, f.ID)
	}
	if len(ids) < 3 {
		t.Fatalf("fixture: %d fragments", len(ids))
	}

	// A rewrite planned on v loses to a delete of one of its rows.
	raced, err := tbl.Commit(ctx, s, &lance.Commit{DeleteRowIDs: roaring64.BitmapOf(12200)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rwRewrite(t, tbl, s, ids, nil); !errors.Is(err, lance.ErrConflict) {
		t.Fatalf("rewrite over a delete of its rows: %v, want ErrConflict", err)
	}
	before = wrLanceDBRead(t, root, raced.Version)

	m, err := rwRewrite(t, tbl, raced, ids, &lance.Commit{SchemaMetadata: map[string]string{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Fragments) != 1 {
		t.Fatalf("%d fragments after the rewrite, want 1", len(m.Fragments))
	}
	tx, err := m.Transaction(ctx)
	if err != nil || tx == nil || tx.Operation != lance.OpRewrite {
		t.Fatalf("transaction %+v, %v; want a rewrite", tx, err)
	}
	after := wrLanceDBRead(t, root, m.Version)
	if after.SchemaMetadata["k"] != "v" {
		t.Errorf("schema metadata riding the rewrite: %v", after.SchemaMetadata)
	}
	if !slices.Equal(wrDataIDs(t, after), wrDataIDs(t, before)) {
		t.Errorf("LanceDB reads other rows after the rewrite")
	}
	for _, col := range []string{"_rowid", "_row_created_at_version", "_row_last_updated_at_version"} {
		if !equalIDs(after.Rows[col], before.Rows[col]) {
			t.Errorf("%s changed across the rewrite: %s", col, diffIDs(after.Rows[col], before.Rows[col]))
		}
	}
	wrSameRowMeta(t, tbl, after)
	cs, err := tbl.Changes(ctx, raced.Version, m.Version)
	if err != nil || !cs.IsEmpty() {
		t.Fatalf("changes across the rewrite: %+v, %v; want none", cs, err)
	}
	// LanceDB writes on top: a delete of a rewritten row by value.
	v = wrLanceDBOps(t, root, map[string]any{"op": "delete", "where": "id = 90001"})
	last := wrLanceDBRead(t, root, v)
	if last.NumRows != after.NumRows-1 {
		t.Errorf("LanceDB delete after the rewrite: %d rows, want %d", last.NumRows, after.NumRows-1)
	}
	wrSameRowMeta(t, tbl, last)
}
