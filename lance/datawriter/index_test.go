package datawriter_test

import (
	"encoding/json"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
)

// lanceDBResults runs LanceDB operations and returns their results.
func lanceDBResults(t *testing.T, table string, ops ...map[string]any) []json.RawMessage {
	t.Helper()
	b, _ := json.Marshal(ops)
	out := lancedbtest.RunNode(t, "interop.mjs", "ops", table, string(b))
	var r struct {
		Results []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("decode interop ops: %v\n%s", err, out)
	}
	return r.Results
}

// TestIndexCarriedOver checks that mvd's commits keep a LanceDB index
// (the manifest's index section) working: LanceDB still lists it and
// answers filtered queries over indexed, new and deleted rows; an
// overwrite drops it, as Lance's does.
func TestIndexCarriedOver(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	tt := createBase(t, "2.2", idRange(0, 1000))
	lanceDBOps(t, tt.root, map[string]any{"op": "create_index", "column": "id"})
	m := tt.commit(0, &lance.Commit{Fragments: tt.write(idRange(2000, 2010))})
	del, err := rowIDsByScan(tt.tbl, m, 5)
	if err != nil {
		t.Fatal(err)
	}
	tt.commit(m.Version, &lance.Commit{DeleteRowIDs: del, Fragments: tt.write([]int64{3000})})

	res := lanceDBResults(t, tt.root,
		map[string]any{"op": "indices"},
		map[string]any{"op": "query", "where": "id = 7"},
		map[string]any{"op": "query", "where": "id = 2005"},
		map[string]any{"op": "query", "where": "id = 5"},
		map[string]any{"op": "query", "where": "id >= 2999"},
		// LanceDB can still use and extend the index after mvd's commits.
		map[string]any{"op": "optimize"},
		map[string]any{"op": "query", "where": "id = 2005 OR id = 6"},
	)
	var indices []struct {
		Name    string   `json:"name"`
		Columns []string `json:"columns"`
	}
	if err := json.Unmarshal(res[0], &indices); err != nil || len(indices) != 1 || indices[0].Columns[0] != "id" {
		t.Fatalf("LanceDB lists indices %s after mvd's commits", res[0])
	}
	for i, want := range []string{"[7]", "[2005]", "[]", "[3000]"} {
		if string(res[i+1]) != want {
			t.Errorf("query %d: LanceDB returns %s, want %s", i, res[i+1], want)
		}
	}
	if q := string(res[5]); q != "[6,2005]" && q != "[2005,6]" {
		t.Errorf("after LanceDB's optimize: %s", q)
	}

	tt.commit(0, &lance.Commit{Overwrite: true, Fragments: tt.write(idRange(0, 10))})
	if res := lanceDBResults(t, tt.root, map[string]any{"op": "indices"}); string(res[0]) != "[]" {
		t.Errorf("after an overwrite LanceDB lists indices %s, want none", res[0])
	}
}
