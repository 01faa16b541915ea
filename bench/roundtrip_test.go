package bench

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// roundTripRows is the size of the small copy of the scan benchmark table.
const roundTripRows = 5000

// TestBenchTablesRoundTrip checks the benchmark's table and reader: a
// 5000-row table from the same generator as BenchmarkScan1M, scanned and
// taken by mvd, must give LanceDB's row count, stable row ids equal to the
// ids, and LanceDB's values for a sample of rows (nulls, empty lists and
// the first and last rows included).
func TestBenchTablesRoundTrip(t *testing.T) {
	lancedbtest.Require(t)
	dir := t.TempDir()
	makeScanTable(t, dir, roundTripRows)
	root := filepath.Join(dir, "bench_scan.lance")

	var sample []uint64
	for id := uint64(0); id < roundTripRows; id += 61 {
		sample = append(sample, id)
	}
	sample = append(sample, roundTripRows-1)
	want := lancedbRows(t, root, sample)
	if len(want) != len(sample) {
		t.Fatalf("LanceDB returned %d of the %d sampled rows", len(want), len(sample))
	}
	checkCoverage(t, want)

	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tbl, err := lance.Open(context.Background(), vfs.OS(), root)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tbl.Checkout(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Scan(context.Background(), lance.ScanOptions{RowMeta: true, BatchSize: 777, Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	inSample := map[string]bool{}
	for _, id := range sample {
		inSample[strconv.FormatUint(id, 10)] = true
	}
	got := map[string]map[string]any{}
	var rows int
	for {
		rec, err := s.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		collect(t, rec, func(row map[string]any) {
			if row["_rowid"] != row["id"] || row["id"] != strconv.Itoa(rows) {
				t.Fatalf("scan row %d: id %v, _rowid %v", rows, row["id"], row["_rowid"])
			}
			if inSample[row["id"].(string)] {
				got[row["id"].(string)] = row
			}
			rows++
		})
		rec.Release()
	}
	if rows != roundTripRows {
		t.Fatalf("mvd scanned %d rows, LanceDB wrote %d", rows, roundTripRows)
	}
	compareRows(t, "scan", got, want)

	ids := roaring64.New()
	ids.AddMany(sample)
	batches, missing, err := m.TakeAll(ctx, ids, lance.ScanOptions{RowMeta: true, Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	if !missing.IsEmpty() {
		t.Fatalf("take: %d ids missing", missing.GetCardinality())
	}
	got = map[string]map[string]any{}
	for _, rec := range batches {
		collect(t, rec, func(row map[string]any) { got[row["id"].(string)] = row })
		rec.Release()
	}
	compareRows(t, "take", got, want)
}

// lancedbRows returns LanceDB's reading of the rows with the given ids,
// keyed by id.
func lancedbRows(t *testing.T, root string, ids []uint64) map[string]map[string]any {
	args := []string{"bench_scan.mjs", "rows", root}
	for _, id := range ids {
		args = append(args, strconv.FormatUint(id, 10))
	}
	var rows []map[string]any
	if err := json.Unmarshal(lancedbtest.RunNode(t, args...), &rows); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, r := range rows {
		out[r["id"].(string)] = r
	}
	return out
}

// checkCoverage fails if the sample misses a case the comparison should
// cover: a null in every nullable column, and an empty list.
func checkCoverage(t *testing.T, rows map[string]map[string]any) {
	nulls := map[string]bool{}
	emptyTags := false
	for _, r := range rows {
		for k, v := range r {
			if v == nil {
				nulls[k] = true
			}
		}
		if tags, ok := r["tags"].([]any); ok && len(tags) == 0 {
			emptyTags = true
		}
	}
	for _, col := range []string{"category", "text", "score", "ts", "tags", "vec"} {
		if !nulls[col] {
			t.Errorf("the sample has no null %s", col)
		}
	}
	if !emptyTags {
		t.Error("the sample has no empty tags list")
	}
}

// collect calls fn with every row of rec as JSON values (columns of the
// table and _rowid, as LanceDB's rows come).
func collect(t *testing.T, rec arrow.RecordBatch, fn func(map[string]any)) {
	keep := func(name string) bool {
		return name == lance.ColRowID || name[0] != '_'
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		row, err := rowJSON(rec, i, keep)
		if err != nil {
			t.Fatal(err)
		}
		fn(normalize(t, row))
	}
}

// normalize round-trips a row through JSON so that it compares with
// reflect.DeepEqual against a row decoded from LanceDB's JSON.
func normalize(t *testing.T, row map[string]any) map[string]any {
	b, err := json.Marshal(row)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func compareRows(t *testing.T, what string, got, want map[string]map[string]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d sampled rows, LanceDB has %d", what, len(got), len(want))
	}
	for id, w := range want {
		g, ok := got[id]
		if !ok {
			t.Errorf("%s: row %s missing", what, id)
			continue
		}
		for col, wv := range w {
			if gv := g[col]; !reflect.DeepEqual(gv, wv) {
				t.Errorf("%s: row %s column %s: mvd %v, LanceDB %v", what, id, col, gv, wv)
			}
		}
		for col := range g {
			if _, ok := w[col]; !ok {
				t.Errorf("%s: row %s: mvd has column %s, LanceDB does not", what, id, col)
			}
		}
	}
}
