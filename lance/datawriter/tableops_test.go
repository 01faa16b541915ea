package datawriter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// baseSchema is the fixture tables' schema (testdata/lancedb/lib/data.mjs).
var baseSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "val", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// baseRecord builds rows for ids: name "g-<id>" (null every tenth id),
// val id/4 (null when id%7 == 3).
func baseRecord(ids []int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, baseSchema)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		if id%10 == 3 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("g-%d", id))
		}
		if id%7 == 3 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Float64Builder).Append(float64(id) / 4)
		}
	}
	return b.NewRecordBatch()
}

func idRange(lo, hi int64) []int64 {
	var out []int64
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// testTable is a table mvd writes in a test.
type testTable struct {
	t      testing.TB
	root   string
	schema *lance.Schema
	tbl    *lance.Table
}

func createBase(t testing.TB, version lance.FileVersion, ids []int64) *testTable {
	t.Helper()
	schema, err := lance.NewSchemaFromArrow(baseSchema)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "base.lance")
	frags, err := datawriter.WriteFragments(vfs.OS(), root, schema, version, []arrow.RecordBatch{baseRecord(ids)})
	if err != nil {
		t.Fatal(err)
	}
	tbl, _, err := lance.Create(context.Background(), vfs.OS(), root, lance.CreateOptions{Schema: schema, Fragments: frags, DataFileVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	return &testTable{t: t, root: root, schema: schema, tbl: tbl}
}

func (tt *testTable) write(ids []int64) []lance.NewFragment {
	tt.t.Helper()
	m, err := tt.tbl.Checkout(context.Background(), 0)
	if err != nil {
		tt.t.Fatal(err)
	}
	frags, err := datawriter.WriteFragments(vfs.OS(), tt.root, m.Schema, m.DataFileVersion, []arrow.RecordBatch{baseRecord(ids)})
	if err != nil {
		tt.t.Fatal(err)
	}
	return frags
}

// at returns the snapshot of version v (0: the latest).
func (tt *testTable) at(v uint64) *lance.Snapshot {
	tt.t.Helper()
	s, err := tt.tbl.Checkout(context.Background(), v)
	if err != nil {
		tt.t.Fatal(err)
	}
	return s
}

// commit commits c on version read (0: the latest).
func (tt *testTable) commit(read uint64, c *lance.Commit) *lance.Snapshot {
	tt.t.Helper()
	m, err := tt.tbl.Commit(context.Background(), tt.at(read), c)
	if err != nil {
		tt.t.Fatal(err)
	}
	return m
}

func viewIDs(t *testing.T, view *lanceDBTable) []int64 {
	t.Helper()
	out := make([]int64, len(view.Data))
	for i, r := range view.Data {
		if err := json.Unmarshal(r["id"], &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// checkRowMeta compares mvd's reading of the row metadata of a version
// with LanceDB's scan of it.
func checkRowMeta(t *testing.T, tbl *lance.Table, view *lanceDBTable) {
	t.Helper()
	m, err := tbl.Checkout(context.Background(), view.Version)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]uint64{}
	err = m.ScanRowMeta(context.Background(), func(r lance.RowMeta) error {
		got["_rowid"] = append(got["_rowid"], r.RowID)
		got["_rowaddr"] = append(got["_rowaddr"], r.RowAddr)
		got["_row_created_at_version"] = append(got["_row_created_at_version"], r.CreatedAt)
		got["_row_last_updated_at_version"] = append(got["_row_last_updated_at_version"], r.LastUpdatedAt)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for col, want := range view.Rows {
		if !slices.Equal(got[col], []uint64(want)) {
			t.Errorf("version %d: %s: mvd reads %d values, LanceDB %d (or they differ)", view.Version, col, len(got[col]), len(want))
		}
	}
}

// lanceDBReads reads several versions with LanceDB in one process.
func lanceDBReads(t *testing.T, root string, from, to uint64) []lanceDBTable {
	t.Helper()
	var vs []string
	for v := from; v <= to; v++ {
		vs = append(vs, fmt.Sprint(v))
	}
	out := lancedbtest.RunNode(t, "interop.mjs", "reads", root, strings.Join(vs, ","))
	var views []lanceDBTable
	if err := json.Unmarshal(out, &views); err != nil || len(views) != len(vs) {
		t.Fatalf("decode %d views: %v", len(views), err)
	}
	return views
}

// TestTableOpsInterop creates a table with mvd, appends, deletes and
// appends in one commit (with schema metadata), overwrites, and checks that
// LanceDB reads exactly the expected rows at each version; then LanceDB
// appends, updates, deletes, merge_inserts and compacts, mvd commits on
// top, and mvd's reading of every resulting version matches LanceDB's.
func TestTableOpsInterop(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	for _, version := range []lance.FileVersion{"2.2", "2.1", "2.0"} {
		t.Run(string(version), func(t *testing.T) {
			t.Parallel()
			tt := createBase(t, version, idRange(0, 1000))

			// Append.
			m := tt.commit(0, &lance.Commit{Fragments: tt.write(idRange(1000, 1500))})
			if tx, _ := m.Transaction(context.Background()); tx.Operation != "append" || m.NextRowID != 1500 {
				t.Fatalf("append: %s, next_row_id %d", tx.Operation, m.NextRowID)
			}
			afterAppend := append(idRange(0, 1000), idRange(1000, 1500)...)

			// Delete and append in one commit, with the watermark; the row
			// ids come from mvd's own readers.
			gone := append(idRange(0, 10), 1000, 1499)
			del, err := rowIDsByScan(tt.tbl, m, gone...)
			if err != nil {
				t.Fatal(err)
			}
			m = tt.commit(m.Version, &lance.Commit{
				DeleteRowIDs:   del,
				Fragments:      tt.write(idRange(5000, 5020)),
				SchemaMetadata: map[string]string{"mv.source_version": "3"},
			})
			if tx, _ := m.Transaction(context.Background()); tx.Operation != "update" {
				t.Fatalf("delete-and-append committed %s", tx.Operation)
			}
			afterUpdate := slices.DeleteFunc(slices.Clone(afterAppend), func(id int64) bool { return slices.Contains(gone, id) })
			afterUpdate = append(afterUpdate, idRange(5000, 5020)...)
			cs, err := tt.tbl.Changes(context.Background(), m.Version-1, m.Version)
			if err != nil || cs.Deleted.GetCardinality() != uint64(len(gone)) || cs.Inserted.GetCardinality() != 20 || !cs.Updated.IsEmpty() {
				t.Fatalf("changes of the delete-and-append: %+v, %v", cs, err)
			}

			// Overwrite: row ids keep counting.
			m = tt.commit(0, &lance.Commit{Overwrite: true, Fragments: tt.write(idRange(9000, 9300))})
			if m.NextRowID != 1520+300 || len(m.Fragments) != 1 {
				t.Fatalf("overwrite: next_row_id %d, %d fragments", m.NextRowID, len(m.Fragments))
			}

			views := lanceDBReads(t, tt.root, 2, 4)
			for i, want := range [][]int64{afterAppend, afterUpdate, idRange(9000, 9300)} {
				v := &views[i]
				if !slices.Equal(viewIDs(t, v), want) {
					t.Fatalf("version %d: LanceDB reads %d rows, want %d", v.Version, len(v.Data), len(want))
				}
				checkValues(t, baseRecord(want), 0, v.Data)
				checkRowMeta(t, tt.tbl, v)
			}
			if views[1].SchemaMetadata["mv.source_version"] != "3" || views[2].Rows["_rowid"][0] != 1520 {
				t.Fatalf("metadata %v, first row id after the overwrite %d", views[1].SchemaMetadata, views[2].Rows["_rowid"][0])
			}

			// LanceDB keeps writing, then mvd replaces one row on top of
			// LanceDB's compaction; mvd reads every version as LanceDB does.
			last := lanceDBOps(t, tt.root,
				map[string]any{"op": "add", "start": 20000, "n": 100},
				map[string]any{"op": "update", "where": "id < 9010", "values": map[string]string{"val": "val + 1"}},
				map[string]any{"op": "delete", "where": "id >= 9290 AND id < 9300"},
				map[string]any{"op": "merge_insert", "on": "id", "ids": []int{9100, 30000}},
				map[string]any{"op": "optimize"},
			)
			lm, err := tt.tbl.Checkout(context.Background(), last)
			if err != nil {
				t.Fatal(err)
			}
			victim, err := rowIDsByScan(tt.tbl, lm, 9000)
			if err != nil {
				t.Fatal(err)
			}
			tt.commit(last, &lance.Commit{DeleteRowIDs: victim, Fragments: tt.write([]int64{777})})
			views = lanceDBReads(t, tt.root, m.Version+1, last+1)
			for i := range views {
				checkRowMeta(t, tt.tbl, &views[i])
			}
			if n := views[len(views)-2].NumRows; n != 300+100-10+1 {
				t.Errorf("LanceDB counts %d rows after its own writes", n)
			}
			final := views[len(views)-1]
			ids := viewIDs(t, &final)
			if final.NumRows != 391 || slices.Contains(ids, 9000) || !slices.Contains(ids, 777) {
				t.Errorf("after mvd's replace LanceDB reads %d rows", final.NumRows)
			}
		})
	}
}
