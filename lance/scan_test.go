package lance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datafile"
	"github.com/mvd-project/mvd/vfs"
)

// scanJSON scans version m with row metadata and renders every row as a
// JSON object (keys in schema order) with the CLI's value conventions.
func scanJSON(t *testing.T, tbl *lance.Table, m *lance.Snapshot, opts lance.ScanOptions) []map[string]any {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opts.Mem = mem
	sc, err := m.Scan(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var rows []map[string]any
	for {
		rec, err := sc.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, recordJSON(t, rec)...)
		rec.Release()
	}
	return rows
}

func recordJSON(t *testing.T, rec arrow.RecordBatch) []map[string]any {
	t.Helper()
	out := make([]map[string]any, rec.NumRows())
	for i := range out {
		row := map[string]any{}
		for c, col := range rec.Columns() {
			b, err := datafile.AppendJSON(nil, col, i)
			if err != nil {
				t.Fatal(err)
			}
			row[rec.Schema().Field(c).Name] = decodeJSON(t, b)
		}
		out[i] = row
	}
	return out
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

// TestScanMatchesLanceDB compares every value of every version's scan with
// LanceDB's, for the fixtures whose answers carry data, and the row
// metadata columns for all of them.
func TestScanMatchesLanceDB(t *testing.T) {
	for _, name := range []string{"history_stable_v21", "v1_names_stable", "history_stable_v22", "history_plain_v22", "history_stable_v20"} {
		t.Run(name, func(t *testing.T) {
			dir := lancedbtest.FixturesDir(t)
			ans, err := lancedbtest.LoadAnswers(filepath.Join(dir, name+".answers.json"))
			if err != nil {
				t.Fatal(err)
			}
			tbl, err := lance.Open(context.Background(), vfs.OS(), filepath.Join(dir, name+".lance"))
			if err != nil {
				t.Fatal(err)
			}
			for _, va := range ans.Versions {
				m, err := tbl.Checkout(context.Background(), va.Version)
				if err != nil {
					t.Fatal(err)
				}
				// Small batches cross page and deletion boundaries often.
				rows := scanJSON(t, tbl, m, lance.ScanOptions{RowMeta: true, BatchSize: 97})
				if uint64(len(rows)) != va.NumRows {
					t.Fatalf("version %d: scanned %d rows, LanceDB %d", va.Version, len(rows), va.NumRows)
				}
				// Without the version columns, the rest is the same.
				slim := scanJSON(t, tbl, m, lance.ScanOptions{RowMeta: true, NoRowVersions: true, BatchSize: 97})
				for i, r := range rows {
					want := maps.Clone(r)
					delete(want, lance.ColCreatedAt)
					delete(want, lance.ColLastUpdatedAt)
					if i >= len(slim) || !reflect.DeepEqual(slim[i], want) {
						t.Fatalf("version %d row %d: a scan without row versions differs", va.Version, i)
					}
				}
				// Decoding only each batch's rows reads the same.
				for _, bs := range []int{97, 5000} {
					if narrow := scanJSON(t, tbl, m, lance.ScanOptions{RowMeta: true, BatchSize: bs, Narrow: true}); !reflect.DeepEqual(narrow, rows) {
						t.Fatalf("version %d: a narrow scan (batch %d) differs", va.Version, bs)
					}
				}
				for i, r := range rows {
					for _, col := range []string{lance.ColRowID, lance.ColRowAddr, lance.ColCreatedAt, lance.ColLastUpdatedAt} {
						got, _ := r[col].(json.Number).Int64()
						if uint64(got) != va.Rows[col][i] {
							t.Fatalf("version %d row %d: %s = %d, LanceDB %d", va.Version, i, col, got, va.Rows[col][i])
						}
					}
					if va.Data == nil {
						continue
					}
					for k, raw := range va.Data[i] {
						want := decodeJSON(t, raw)
						if !reflect.DeepEqual(r[k], want) {
							t.Fatalf("version %d row %d column %s: %v, LanceDB %v", va.Version, i, k, r[k], want)
						}
					}
					if len(r) != len(va.Data[i])+4 {
						t.Fatalf("version %d row %d: %d columns, LanceDB %d", va.Version, i, len(r)-4, len(va.Data[i]))
					}
				}
			}
		})
	}
}

func TestScanProjectionAndLimit(t *testing.T) {
	tbl, err := lance.Open(context.Background(), vfs.OS(), filepath.Join(lancedbtest.FixturesDir(t), "history_stable_v21.lance"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := tbl.Checkout(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	rows := scanJSON(t, tbl, m, lance.ScanOptions{Columns: []string{"val", "id"}, Limit: 150, BatchSize: 64})
	if len(rows) != 150 {
		t.Fatalf("%d rows, want 150", len(rows))
	}
	if len(rows[0]) != 2 || rows[0]["id"] == nil {
		t.Fatalf("projected row %v", rows[0])
	}
	if _, err := m.Scan(context.Background(), lance.ScanOptions{Columns: []string{"nope"}}); err == nil {
		t.Fatal("scan of an unknown column succeeded")
	}
}

// TestRowIDsMatchesScanRowMeta checks Snapshot.RowIDs against the row ids
// ScanRowMeta visits on every version of fixtures with deletions, updates
// and (history_plain) row addresses instead of stable ids.
func TestRowIDsMatchesScanRowMeta(t *testing.T) {
	for _, name := range []string{"history_stable_v21", "history_plain_v22", "history_stable_v20"} {
		tbl, err := lance.Open(context.Background(), vfs.OS(), filepath.Join(lancedbtest.FixturesDir(t), name+".lance"))
		if err != nil {
			t.Fatal(err)
		}
		versions, err := tbl.Versions(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range versions {
			m, err := tbl.Checkout(context.Background(), v.Version)
			if err != nil {
				t.Fatal(err)
			}
			want := roaring64.New()
			if err := m.ScanRowMeta(context.Background(), func(r lance.RowMeta) error { want.Add(r.RowID); return nil }); err != nil {
				t.Fatal(err)
			}
			got, err := m.RowIDs(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equals(want) {
				t.Fatalf("%s version %d: %d row ids, ScanRowMeta %d", name, v.Version, got.GetCardinality(), want.GetCardinality())
			}
		}
	}
}
