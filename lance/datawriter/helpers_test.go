package datawriter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datafile"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// createTable has mvd write recs (one schema) as fragments in version and
// create a table of them; it returns the table's root.
func createTable(t *testing.T, version lance.FileVersion, recs ...arrow.RecordBatch) string {
	t.Helper()
	schema, err := lance.NewSchemaFromArrow(recs[0].Schema())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "t.lance")
	frags, err := datawriter.WriteFragments(vfs.OS(), root, schema, version, recs)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := lance.Create(context.Background(), vfs.OS(), root, lance.CreateOptions{Schema: schema, Fragments: frags, DataFileVersion: version}); err != nil {
		t.Fatal(err)
	}
	return root
}

// checkLanceDBReads checks that LanceDB reads the table at root as recs,
// one after the other: every row, every value (checkValues). It returns
// what LanceDB read, for the caller's further checks.
func checkLanceDBReads(t *testing.T, root string, recs ...arrow.RecordBatch) *lanceDBTable {
	t.Helper()
	var n int64
	for _, rec := range recs {
		n += rec.NumRows()
	}
	got := lanceDBRead(t, root)
	if got.NumRows != uint64(n) || len(got.Data) != int(n) {
		t.Fatalf("LanceDB reads %d rows (%d in the scan), want %d", got.NumRows, len(got.Data), n)
	}
	off := 0
	for _, rec := range recs {
		checkValues(t, rec, off, got.Data)
		off += int(rec.NumRows())
	}
	return got
}

// lanceDBTable is what LanceDB reads at one version (interop.mjs read).
type lanceDBTable struct {
	Version        uint64                       `json:"version"`
	NumRows        uint64                       `json:"num_rows"`
	Schema         json.RawMessage              `json:"schema"`
	SchemaMetadata map[string]string            `json:"schema_metadata"`
	Rows           map[string]lancedbtest.Runs  `json:"rows"`
	Data           []map[string]json.RawMessage `json:"data"`
}

func lanceDBRead(t *testing.T, table string) *lanceDBTable {
	t.Helper()
	out := lancedbtest.RunNode(t, "interop.mjs", "read", table)
	var v lanceDBTable
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("decode interop read: %v\n%s", err, out)
	}
	return &v
}

func lanceDBOps(t *testing.T, table string, ops ...map[string]any) uint64 {
	t.Helper()
	b, _ := json.Marshal(ops)
	out := lancedbtest.RunNode(t, "interop.mjs", "ops", table, string(b))
	var r struct {
		Version uint64 `json:"version"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("decode interop ops: %v\n%s", err, out)
	}
	return r.Version
}

// normJSON decodes JSON text into a comparable value with exact numbers.
func normJSON(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

// sameValue compares two JSON renderings of one value. Half floats are
// compared as halves: LanceDB's harness prints the shortest decimal that
// round-trips at half precision, mvd's renderer at single precision.
func sameValue(t *testing.T, dt arrow.DataType, got, want []byte) bool {
	t.Helper()
	if bytes.Equal(got, want) {
		return true
	}
	g, w := normJSON(t, got), normJSON(t, want)
	if dt.ID() == arrow.FLOAT16 {
		gn, ok1 := g.(json.Number)
		wn, ok2 := w.(json.Number)
		if ok1 && ok2 {
			gf, err1 := gn.Float64()
			wf, err2 := wn.Float64()
			// Within half a half-precision ulp: the same half.
			return err1 == nil && err2 == nil && math.Abs(gf-wf) <= math.Abs(wf)/2048+1e-7
		}
	}
	return reflect.DeepEqual(g, w)
}

// checkValues compares every value LanceDB read with the record's values
// rendered in the same conventions.
func checkValues(t *testing.T, rec arrow.RecordBatch, rowOffset int, got []map[string]json.RawMessage) {
	t.Helper()
	for c, f := range rec.Schema().Fields() {
		col := rec.Column(c)
		bad := 0
		for r := 0; r < int(rec.NumRows()); r++ {
			want, err := datafile.AppendJSON(nil, col, r)
			if err != nil {
				t.Fatal(err)
			}
			g, ok := got[rowOffset+r][f.Name]
			if !ok {
				t.Fatalf("LanceDB row %d has no column %q", rowOffset+r, f.Name)
			}
			if !sameValue(t, col.DataType(), g, want) {
				if bad++; bad <= 3 {
					t.Errorf("row %d column %q: LanceDB reads %s, mvd wrote %s", rowOffset+r, f.Name, g, want)
				}
			}
		}
		if bad > 3 {
			t.Errorf("column %q: %d values differ", f.Name, bad)
		}
	}
}

// mustAt returns the snapshot of version v of tbl (0: the latest).
func mustAt(t testing.TB, tbl *lance.Table, v uint64) *lance.Snapshot {
	t.Helper()
	s, err := tbl.Checkout(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// rowIDsByScan finds the stable row ids of data ids at version m, with
// mvd's own readers only: the id column through the data file reader, row
// ids through the fragments' row metadata.
func rowIDsByScan(tbl *lance.Table, m *lance.Snapshot, dataIDs ...int64) (*roaring64.Bitmap, error) {
	want := map[int64]bool{}
	for _, id := range dataIDs {
		want[id] = true
	}
	out := roaring64.New()
	for _, f := range m.Fragments {
		df := f.Files[0]
		file, err := tbl.FS().Open(path.Join(tbl.Root(), "data", df.Path))
		if err != nil {
			return nil, err
		}
		rd, err := datafile.Open(file, file.Size(), df.Path)
		if err != nil {
			file.Close()
			return nil, err
		}
		col, err := rd.ReadField(context.Background(), 0, arrow.PrimitiveTypes.Int64, 0, f.PhysicalRows, memory.DefaultAllocator)
		file.Close()
		if err != nil {
			return nil, err
		}
		ids := col.(*array.Int64).Int64Values()
		fr, err := m.FragmentRows(context.Background(), f)
		if err != nil {
			return nil, err
		}
		if err := fr.Each(func(off uint64, r lance.RowMeta) error {
			if want[ids[off]] {
				out.Add(r.RowID)
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if out.GetCardinality() != uint64(len(dataIDs)) {
		return nil, fmt.Errorf("found %d of %d ids at version %d", out.GetCardinality(), len(dataIDs), m.Version)
	}
	return out, nil
}
