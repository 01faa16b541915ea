package lance_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// TestLegacyFixture compares everything the table-level reader reports
// (every version's rows, row ids and addresses, row versions, changes) with
// LanceDB's answers on a table LanceDB writes in Lance file format 0.1
// ("legacy"): appends, an update, deletions (an Arrow deletion file, a
// dropped fragment), a merge, a compaction and an added column.
func TestLegacyFixture(t *testing.T) {
	dir := lancedbtest.Generate(t, []string{"history_stable_legacy"})
	tbl, err := lance.Open(context.Background(), vfs.OS(), filepath.Join(dir, "history_stable_legacy.lance"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := tbl.Checkout(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if m.DataFileVersion != lance.Legacy {
		t.Fatalf("data file version %q, want legacy", m.DataFileVersion)
	}
	checkFixture(t, dir, "history_stable_legacy")
	ans, err := lancedbtest.LoadAnswers(filepath.Join(dir, "history_stable_legacy.answers.json"))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, va := range ans.Versions {
		m, err := tbl.Checkout(context.Background(), va.Version)
		if err != nil {
			t.Fatal(err)
		}
		// Small batches cross batch (page) and deletion boundaries often.
		rows := scanJSON(t, tbl, m, lance.ScanOptions{RowMeta: true, BatchSize: 97})
		if uint64(len(rows)) != va.NumRows || len(va.Data) != len(rows) {
			t.Fatalf("version %d: scanned %d rows, LanceDB %d (%d with data)", va.Version, len(rows), va.NumRows, len(va.Data))
		}
		if narrow := scanJSON(t, tbl, m, lance.ScanOptions{RowMeta: true, BatchSize: 97, Narrow: true}); !reflect.DeepEqual(narrow, rows) {
			t.Fatalf("version %d: a narrow scan differs", va.Version)
		}
		ids := roaring64.New()
		var want []map[string]any
		for i, r := range rows {
			for k, raw := range va.Data[i] {
				if w := decodeJSON(t, raw); !reflect.DeepEqual(r[k], w) {
					t.Fatalf("version %d row %d column %s: %v, LanceDB %v", va.Version, i, k, r[k], w)
				}
			}
			if len(r) != len(va.Data[i])+4 {
				t.Fatalf("version %d row %d: %d columns, LanceDB %d", va.Version, i, len(r)-4, len(va.Data[i]))
			}
			if rng.IntN(4) == 0 {
				id, _ := r[lance.ColRowID].(json.Number).Int64()
				ids.Add(uint64(id))
				want = append(want, r)
			}
		}
		// A take by row id reads the same rows as the scan.
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		batches, missing, err := m.TakeAll(context.Background(), ids, lance.ScanOptions{RowMeta: true, Mem: mem})
		if err != nil {
			t.Fatalf("version %d: take: %v", va.Version, err)
		}
		var got []map[string]any
		for _, b := range batches {
			got = append(got, recordJSON(t, b)...)
			b.Release()
		}
		mem.AssertSize(t, 0)
		if !missing.IsEmpty() || !reflect.DeepEqual(got, want) {
			t.Fatalf("version %d: a take of %d rows differs from the scan (%d missing)", va.Version, len(want), missing.GetCardinality())
		}
	}
}

// TestLegacyCorruptNamesFormat checks that a legacy data file that cannot
// be read is reported as corrupt, never read as a 2.x file.
func TestLegacyCorruptNamesFormat(t *testing.T) {
	dir := lancedbtest.Generate(t, []string{"history_stable_legacy"})
	root := filepath.Join(dir, "history_stable_legacy.lance")
	files, err := filepath.Glob(filepath.Join(root, "data", "*.lance"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no data files: %v", err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// Point the metadata past the end of the file.
		for i := len(b) - 16; i < len(b)-8; i++ {
			b[i] = 0xff
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tbl, err := lance.Open(context.Background(), vfs.OS(), root)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tbl.Checkout(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := m.Scan(context.Background(), lance.ScanOptions{})
	if err == nil {
		defer sc.Close()
		var rec interface{ Release() }
		rec, err = sc.Next(context.Background())
		if err == nil && rec != nil {
			rec.Release()
		}
	}
	if err == nil {
		t.Fatal("scan of corrupt legacy files succeeded")
	}
	if !errors.Is(err, lance.ErrCorrupt) || !strings.Contains(err.Error(), "metadata") {
		t.Fatalf("err = %v, want ErrCorrupt about the metadata", err)
	}
}

// TestLegacyAlteredNullability scans a legacy table whose column was made
// nullable after its file was written: LanceDB reads its empty strings as
// nulls by the table's nullability, not the file's, and so must a scan.
func TestLegacyAlteredNullability(t *testing.T) {
	out := t.TempDir()
	lancedbtest.RunNode(t, "types.mjs", out, "legacy", "10")
	b, err := os.ReadFile(filepath.Join(out, "altered_legacy.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ans struct{ Rows []map[string]json.RawMessage }
	if err := json.Unmarshal(b, &ans); err != nil {
		t.Fatal(err)
	}
	tbl, err := lance.Open(context.Background(), vfs.OS(), filepath.Join(out, "db", "altered_legacy.lance"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := tbl.Checkout(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	rows := scanJSON(t, tbl, m, lance.ScanOptions{})
	if len(rows) != len(ans.Rows) {
		t.Fatalf("scanned %d rows, LanceDB %d", len(rows), len(ans.Rows))
	}
	nulls := 0
	for i, r := range rows {
		for k, raw := range ans.Rows[i] {
			w := decodeJSON(t, raw)
			if !reflect.DeepEqual(r[k], w) {
				t.Fatalf("row %d column %s: %v, LanceDB %v", i, k, r[k], w)
			}
			if k == "to_nullable" && w == nil {
				nulls++
			}
		}
	}
	if nulls == 0 {
		t.Fatal("LanceDB reads no null in the altered column: the table does not test what it should")
	}
}
