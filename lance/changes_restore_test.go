package lance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/internal/lancedbtest"
)

// lanceDBRowsByID reads every listed version with LanceDB and returns, per
// version, each live row's data (its JSON) by stable row id.
func lanceDBRowsByID(t *testing.T, root string, versions []uint64) map[uint64]map[uint64]string {
	t.Helper()
	list := ""
	for i, v := range versions {
		if i > 0 {
			list += ","
		}
		list += utoa(v)
	}
	var views []wrLanceDBView
	if err := json.Unmarshal(lancedbtest.RunNode(t, "interop.mjs", "reads", root, list), &views); err != nil {
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
			b, _ := json.Marshal(v.Data[i])
			rows[id] = string(b)
		}
		out[v.Version] = rows
	}
	return out
}

// expectedChanges is the change set from version a to b that the rows
// LanceDB shows imply: ids live only at b, only at a, and at both with
// other values.
func expectedChanges(a, b map[uint64]string) (ins, upd, del *roaring64.Bitmap) {
	ins, upd, del = roaring64.New(), roaring64.New(), roaring64.New()
	for id, row := range b {
		old, ok := a[id]
		switch {
		case !ok:
			ins.Add(id)
		case !bytes.Equal([]byte(old), []byte(row)):
			upd.Add(id)
		}
	}
	for id := range a {
		if _, ok := b[id]; !ok {
			del.Add(id)
		}
	}
	return ins, upd, del
}

// TestChangesAcrossRestore: LanceDB deletes a row, updates another and
// appends, then restores the first version, so the fragment regains its
// deleted row, the updated row is back to its old value and the appended
// rows are gone. The change set between every two versions, across the
// restore too, is the one the rows LanceDB shows at both imply.
func TestChangesAcrossRestore(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	tt := createBase(t, "2.2", idRange(0, 100))
	last := wrLanceDBOps(t, tt.root,
		map[string]any{"op": "delete", "where": "id = 5"},
		map[string]any{"op": "update", "where": "id = 6", "values": map[string]string{"name": "'w'"}},
		map[string]any{"op": "add", "start": 200, "n": 3},
		map[string]any{"op": "restore", "version": 1},
		map[string]any{"op": "delete", "where": "id = 7"},
	)
	var versions []uint64
	for v := uint64(1); v <= last; v++ {
		versions = append(versions, v)
	}
	rows := lanceDBRowsByID(t, tt.root, versions)
	ctx := context.Background()
	for _, a := range versions {
		for _, b := range versions[a-1:] {
			cs, err := tt.tbl.Changes(ctx, a, b)
			if err != nil {
				t.Fatalf("changes %d..%d: %v", a, b, err)
			}
			ins, upd, del := expectedChanges(rows[a], rows[b])
			for _, c := range []struct {
				name      string
				got, want *roaring64.Bitmap
			}{{"inserted", cs.Inserted, ins}, {"updated", cs.Updated, upd}, {"deleted", cs.Deleted, del}} {
				if !c.got.Equals(c.want) {
					t.Errorf("changes %d..%d: %s %v, LanceDB's rows say %v", a, b, c.name, c.got.ToArray(), c.want.ToArray())
				}
			}
		}
	}
}
