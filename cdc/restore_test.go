package cdc

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/internal/lancedbtest"
)

// lanceDBRows reads versions of the table at root with LanceDB and
// returns, per version, each live row's data (as JSON) by stable row id.
func lanceDBRows(t *testing.T, root string, versions []string) map[uint64]map[uint64]string {
	t.Helper()
	var views []struct {
		Version uint64                       `json:"version"`
		Rows    map[string]lancedbtest.Runs  `json:"rows"`
		Data    []map[string]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(lancedbtest.RunNode(t, "interop.mjs", "reads", root, strings.Join(versions, ",")), &views); err != nil {
		t.Fatal(err)
	}
	out := map[uint64]map[uint64]string{}
	for _, v := range views {
		ids := v.Rows["_rowid"]
		if len(ids) != len(v.Data) {
			t.Fatalf("version %d: %d row ids for %d rows", v.Version, len(ids), len(v.Data))
		}
		rows := map[uint64]string{}
		for i, id := range ids {
			b, err := json.Marshal(v.Data[i])
			if err != nil {
				t.Fatal(err)
			}
			rows[id] = string(b)
		}
		out[v.Version] = rows
	}
	return out
}

// TestChangesAcrossRestore: LanceDB deletes a row, updates another,
// appends, restores the first version (the fragment regains its deleted
// row, the updated row its old value, the appended rows are gone) and
// deletes again. The watcher reports every step with the change set the
// rows LanceDB shows before and after imply.
func TestChangesAcrossRestore(t *testing.T) {
	lancedbtest.Require(t)
	dir := t.TempDir()
	root := createTable(t, dir, "src", 100, false)
	w := syncWatcher(t, dir)
	w.Watch("src", 1)
	ops, err := json.Marshal([]map[string]any{
		{"op": "delete", "where": "id = 5"},
		{"op": "update", "where": "id = 6", "values": map[string]string{"id": "id + 1000"}},
		{"op": "add_rows", "rows": []map[string]any{{"id": 200}, {"id": 201}}},
		{"op": "restore", "version": 1},
		{"op": "delete", "where": "id = 7"},
	})
	if err != nil {
		t.Fatal(err)
	}
	lancedbtest.RunNode(t, "interop.mjs", "ops", root, string(ops))
	var versions []string
	for v := 1; v <= 6; v++ {
		versions = append(versions, fmt.Sprint(v))
	}
	rows := lanceDBRows(t, root, versions)
	var steps []Event
	for _, ev := range w.scanNow(t, false) {
		if ev.Kind == KindVersion {
			steps = append(steps, ev)
		}
	}
	checkContiguous(t, steps, 1, 6)
	for _, ev := range steps {
		before, after := rows[ev.From], rows[ev.To]
		ins, upd, del := roaring64.New(), roaring64.New(), roaring64.New()
		for id, row := range after {
			if old, ok := before[id]; !ok {
				ins.Add(id)
			} else if old != row {
				upd.Add(id)
			}
		}
		for id := range before {
			if _, ok := after[id]; !ok {
				del.Add(id)
			}
		}
		for _, c := range []struct {
			name      string
			got, want *roaring64.Bitmap
		}{{"inserted", ev.Changes.Inserted, ins}, {"updated", ev.Changes.Updated, upd}, {"deleted", ev.Changes.Deleted, del}} {
			if !c.got.Equals(c.want) {
				t.Errorf("%v (%s): %s %v, LanceDB's rows say %v", ev, ev.Operation, c.name, c.got.ToArray(), c.want.ToArray())
			}
		}
	}
	if op := steps[3].Operation; op != "restore" {
		t.Errorf("step 4->5 is a %q, want the restore", op)
	}
}
