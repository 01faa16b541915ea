package lance

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/vfs"
)

// mvScript has LanceDB 0.39 create a materialized view and refresh it once
// after an append, so the view's history holds refresh data commits.
const mvScript = `
import * as lancedb from %q;
const db = await lancedb.connect(process.argv[2]);
const rows = []; for (let i = 0; i < 20; i++) rows.push({ id: i, val: i * 1.5 });
const src = await db.createTable("src", rows, { storageOptions: { new_table_enable_stable_row_ids: "true" } });
const mv = await db.createMaterializedView("v", "src", { select: ["id", "val"], where: "id > 3" });
await mv.refresh();
await src.add([{ id: 100, val: 1 }, { id: 101, val: 2 }]);
await mv.refresh();
`

// TestKeyFilterMatchesLanceDB checks mvd's inserted-rows key filter bit
// for bit against the one LanceDB's refresh writes: for every Update of a
// LanceDB-refreshed view, the bloom filter of the __source_row_id values
// the commit added, plus RefreshSentinel, is the bitmap LanceDB wrote.
func TestKeyFilterMatchesLanceDB(t *testing.T) {
	lancedbtest.Require(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "mv.mjs")
	index := filepath.Join(lancedbtest.HarnessDir(t), "node_modules", "@lancedb", "lancedb", "dist", "index.js")
	if err := os.WriteFile(script, fmt.Appendf(nil, mvScript, index), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", script, dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("LanceDB: %v\n%s", err, stderr.String())
	}
	ctx := context.Background()
	view, err := Open(ctx, vfs.OS(), filepath.Join(dir, "v.lance"))
	if err != nil {
		t.Fatal(err)
	}
	refs, err := view.Versions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, ref := range refs[1:] {
		s, err := view.Checkout(ctx, ref.Version)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := s.Transaction(ctx)
		if err != nil || tx == nil {
			t.Fatalf("version %d: transaction %v, %v", ref.Version, tx, err)
		}
		u := tx.pb.GetUpdate()
		if u == nil {
			continue
		}
		theirs, ok, opaque, err := insertedRowsBloom(u)
		if err != nil || !ok || opaque {
			t.Fatalf("version %d: LanceDB's update has no bloom key filter (%v, %v, %v)", ref.Version, ok, opaque, err)
		}
		prev, err := view.Checkout(ctx, ref.Version-1)
		if err != nil {
			t.Fatal(err)
		}
		keys := addedSourceIDs(t, prev, s)
		keys.Add(RefreshSentinel)
		if ours := keyBloom(keys); !bytes.Equal(ours, theirs) {
			t.Fatalf("version %d: key filter of %d keys differs from LanceDB's", ref.Version, keys.GetCardinality())
		}
		id, err := keyFilterFieldID(s.Schema, &KeyFilter{Column: "__source_row_id"})
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		want.Write(encodeKeyFilter(id, &KeyFilter{Keys: keys}))
		prepared := &KeyFilter{Keys: keys}
		prepared.Prepare()
		if !bytes.Equal(encodeKeyFilter(id, prepared), want.Bytes()) {
			t.Errorf("version %d: a prepared filter encodes differently", ref.Version)
		}
		raw, _, _ := unknownField(u.ProtoReflect().GetUnknown(), updateInsertedRows)
		if !bytes.Equal(raw, want.Bytes()) {
			t.Errorf("version %d: KeyExistenceFilter message differs from LanceDB's", ref.Version)
		}
		checked++
	}
	if checked < 2 {
		t.Fatalf("only %d refresh updates in the view's history", checked)
	}
}

// addedSourceIDs returns the __source_row_id values of the rows of s in
// fragments that prev does not have: the rows the commit wrote.
func addedSourceIDs(t *testing.T, prev, s *Snapshot) *roaring64.Bitmap {
	t.Helper()
	old := map[uint64]bool{}
	for _, f := range prev.Fragments {
		old[f.ID] = true
	}
	sc, err := s.Scan(context.Background(), ScanOptions{Columns: []string{"__source_row_id"}, RowMeta: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	keys := roaring64.New()
	for {
		rec, err := sc.Next(context.Background())
		if err == io.EOF {
			return keys
		}
		if err != nil {
			t.Fatal(err)
		}
		src, addr := rec.Column(0).(*array.Uint64), rec.Column(2).(*array.Uint64)
		for i := 0; i < src.Len(); i++ {
			if !old[addr.Value(i)>>32] {
				keys.Add(src.Value(i))
			}
		}
		rec.Release()
	}
}
