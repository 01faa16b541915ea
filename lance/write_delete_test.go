package lance_test

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
)

// TestDeleteByRowIDInterop deletes rows by stable row id from a LanceDB
// table, drops a wholly deleted fragment and commits schema metadata, then
// checks that LanceDB reads exactly that, can keep writing (append,
// update, delete, merge_insert, optimize) and that mvd reads the result as
// LanceDB does.
func TestDeleteByRowIDInterop(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	root := wrCopyFixture(t, "history_stable_v22")
	tbl := wrOpenTable(t, root)
	before := wrLanceDBRead(t, root) // v13: ids 30000..32999, row ids 12100..15099
	if before.Version != 13 || before.NumRows != 3000 {
		t.Fatalf("fixture changed: version %d, %d rows", before.Version, before.NumRows)
	}
	rowIDOf := map[uint64]int64{}
	for i, id := range wrDataIDs(t, before) {
		rowIDOf[before.Rows["_rowid"][i]] = id
	}

	// 1. Rows from both fragments, one commit.
	del := roaring64.BitmapOf(12100, 12101, 12102, 13000, 14100, 15099)
	m, err := tbl.Commit(context.Background(), wrCheckout(t, tbl, 13), &lance.Commit{DeleteRowIDs: del})
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != 14 || m.ReaderFlags&lance.FlagDeletionFiles == 0 {
		t.Fatalf("commit gave version %d flags %v", m.Version, lance.FlagNames(m.ReaderFlags))
	}
	if hint, err := os.ReadFile(filepath.Join(root, "_versions", "latest_version_hint.json")); err != nil || string(hint) != `{"version":14}` {
		t.Errorf("version hint = %s, %v", hint, err)
	}
	tx, err := m.Transaction(context.Background())
	if err != nil || tx == nil || tx.Operation != "delete" || tx.ReadVersion != 13 {
		t.Fatalf("transaction = %+v, %v; want a delete read at 13", tx, err)
	}
	after := wrLanceDBRead(t, root)
	if after.Version != 14 || after.NumRows != 2994 {
		t.Fatalf("LanceDB reads version %d with %d rows, want 14 with 2994", after.Version, after.NumRows)
	}
	wantIDs := wrWithout(wrDataIDs(t, before), func(id int64) bool {
		for _, r := range del.ToArray() {
			if rowIDOf[r] == id {
				return true
			}
		}
		return false
	})
	if got := wrDataIDs(t, after); !slices.Equal(got, wantIDs) {
		t.Fatalf("LanceDB rows after the delete differ (%d vs %d)", len(got), len(wantIDs))
	}
	wrSameRowMeta(t, tbl, after)
	cs, err := tbl.Changes(context.Background(), 13, 14)
	if err != nil || !slices.Equal(cs.Deleted.ToArray(), del.ToArray()) || !cs.Inserted.IsEmpty() || !cs.Updated.IsEmpty() {
		t.Fatalf("changes 13..14 = %v %v", cs, err)
	}

	// 2. The rest of the second fragment: it is dropped, not given a file.
	rest := roaring64.New()
	rest.AddRange(14100, 15100)
	m, err = tbl.Commit(context.Background(), wrCheckout(t, tbl, 0), &lance.Commit{DeleteRowIDs: rest})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Fragments) != 1 {
		t.Fatalf("version %d has %d fragments, want the emptied one dropped", m.Version, len(m.Fragments))
	}
	// Deleting rows that are already gone changes nothing.
	if _, err := tbl.Commit(context.Background(), wrCheckout(t, tbl, 0), &lance.Commit{DeleteRowIDs: roaring64.BitmapOf(14100)}); !errors.Is(err, lance.ErrEmptyCommit) {
		t.Fatalf("deleting a deleted row: err = %v, want ErrEmptyCommit", err)
	}

	// 3. Schema metadata alone: an UpdateConfig.
	m, err = tbl.Commit(context.Background(), wrCheckout(t, tbl, 0), &lance.Commit{SchemaMetadata: map[string]string{"mv.source_version": "7", "mv.note": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if tx, _ := m.Transaction(context.Background()); tx == nil || tx.Operation != "update_config" {
		t.Fatalf("metadata commit transaction = %+v", tx)
	}
	m, err = tbl.Commit(context.Background(), wrCheckout(t, tbl, 0), &lance.Commit{DeleteSchemaMetadata: []string{"mv.note"}, DeleteRowIDs: roaring64.BitmapOf(12103)})
	if err != nil {
		t.Fatal(err)
	}
	view := wrLanceDBRead(t, root)
	if view.Version != m.Version || view.NumRows != 1995 || view.SchemaMetadata["mv.source_version"] != "7" || len(view.SchemaMetadata) != 1 {
		t.Fatalf("LanceDB reads version %d, %d rows, metadata %v", view.Version, view.NumRows, view.SchemaMetadata)
	}
	wrSameRowMeta(t, tbl, view)

	// 4. LanceDB keeps writing on top of mvd's versions, and mvd reads it.
	last := wrLanceDBOps(t, root,
		map[string]any{"op": "add", "start": 40000, "n": 50},
		map[string]any{"op": "update", "where": "id < 30010", "values": map[string]string{"val": "val + 1"}},
		map[string]any{"op": "delete", "where": "id >= 31990 AND id < 32000"},
		map[string]any{"op": "merge_insert", "on": "id", "ids": []int{30020, 30021, 50000}},
		map[string]any{"op": "optimize"},
	)
	for v := m.Version + 1; v <= last; v++ {
		view := wrLanceDBRead(t, root, v)
		wrSameRowMeta(t, tbl, view)
		if view.SchemaMetadata["mv.source_version"] != "7" {
			t.Errorf("version %d lost the schema metadata: %v", v, view.SchemaMetadata)
		}
	}
	final := wrLanceDBRead(t, root)
	if final.NumRows != 1995+50-10+1 {
		t.Errorf("final LanceDB count %d", final.NumRows)
	}
	// mvd can still delete after LanceDB's compaction (row ids survive it).
	if _, err := tbl.Commit(context.Background(), wrCheckout(t, tbl, 0), &lance.Commit{DeleteRowIDs: roaring64.BitmapOf(12200)}); err != nil {
		t.Fatal(err)
	}
	if v := wrLanceDBRead(t, root); v.NumRows != final.NumRows-1 {
		t.Errorf("after mvd's last delete LanceDB counts %d, want %d", v.NumRows, final.NumRows-1)
	}
}
