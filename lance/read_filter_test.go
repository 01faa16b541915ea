package lance_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// TestReadRowsFiltered: ReadRows with a filter returns exactly the rows of
// the unfiltered ReadRows that the filter keeps, in order, with the output
// columns only — for fragments read whole (filtered scans, an appended
// fragment) and for rows taken from the others (filtered after the take),
// over a LanceDB table with deleted rows and dictionary pages. A filtered
// scan of the table, whose fragment 3 lost its first rows only (its live
// rows are one run that does not start at offset 0), is checked the same
// way.
func TestReadRowsFiltered(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	if _, err := d.CreateEvents("events", 6000, 1000, 4); err != nil {
		t.Fatal(err)
	}
	// Fragment 3 (ids 3000-3999) loses its first two rows only: its live
	// rows are one run that does not start at offset 0.
	if _, err := d.Delete("events", "(id % 13 = 5 AND (id < 3000 OR id >= 4000)) OR id = 3000 OR id = 3001"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.AppendEvents("events", 6000, 1500, 9); err != nil {
		t.Fatal(err)
	}
	tbl, err := lance.Open(ctx, vfs.OS(), filepath.Join(dir, "events.lance"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := tbl.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Every row of the appended fragment (read whole) and a third of the
	// others (taken: their fragments have deletions).
	rng := rand.New(rand.NewPCG(3, 4))
	ids := roaring64.New()
	for _, r := range scanJSON(t, tbl, m, lance.ScanOptions{Columns: []string{"id"}, RowID: true}) {
		if rowNum(t, r, "id") >= 6000 || rng.IntN(3) == 0 {
			ids.Add(rowNum(t, r, lance.ColRowID))
		}
	}
	cases := []struct{ out, filter []string }{
		{[]string{"id", "user"}, []string{"kind", "amount"}},
		{[]string{"id", "amount"}, []string{"kind", "amount"}},
		{[]string{"kind"}, []string{"user"}},
		{[]string{}, []string{"amount"}},
	}
	for k := range 2 * len(cases) {
		c, sparse := cases[k/2], k%2 == 1
		name := fmt.Sprint(c.out, " sparse=", sparse)
		all := uniq(append(append([]string{}, c.out...), c.filter...))
		want := wantFiltered(t, readAll(t, m, ids, lance.ScanOptions{Columns: all, RowID: true, BatchSize: 333}, nil), c.filter, c.out, sparse)
		var scanned, taken int
		opts := lance.ScanOptions{Columns: c.out, RowID: true, BatchSize: 500, Filter: &lance.ScanFilter{
			Columns: c.filter, Dictionaries: true,
			Select: func(rec arrow.RecordBatch) ([]int, error) {
				var sel []int
				for i := range int(rec.NumRows()) {
					if keepRow(rec.Columns(), i, sparse) {
						sel = append(sel, i)
					}
				}
				return sel, nil
			},
		}}
		var got []map[string]any
		for _, rec := range readAll(t, m, ids, opts, func(rd *lance.RowReader) { scanned, taken = rd.Scanned, rd.Taken }) {
			if rec.NumRows() == 0 {
				t.Fatalf("%v: an empty batch", name)
			}
			if rec.NumCols() != int64(len(c.out)+1) {
				t.Fatalf("%v: batch columns %v", name, rec.Schema())
			}
			got = append(got, recordJSON(t, rec)...)
			rec.Release()
		}
		if scanned == 0 || taken == 0 {
			t.Fatalf("%v: %d fragments scanned, %d taken; want both", name, scanned, taken)
		}
		sameRows(t, name, got, want)

		// The same filter over a scan of every row.
		want = wantFiltered(t, scanBatches(t, m, lance.ScanOptions{Columns: all, RowID: true}), c.filter, c.out, sparse)
		got = got[:0]
		for _, rec := range scanBatches(t, m, opts) {
			got = append(got, recordJSON(t, rec)...)
			rec.Release()
		}
		sameRows(t, fmt.Sprint(name, " (scan)"), got, want)
	}
}

func sameRows(t *testing.T, name string, got, want []map[string]any) {
	t.Helper()
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("%s: %d rows, want %d", name, len(got), len(want))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("%s row %d: %v, want %v", name, i, got[i], want[i])
		}
	}
}

// readAll returns every batch of a ReadRows (checked for leaks); done sees
// the reader at the end.
func readAll(t *testing.T, m *lance.Snapshot, ids *roaring64.Bitmap, opts lance.ScanOptions, done func(*lance.RowReader)) []arrow.RecordBatch {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	opts.Mem = mem
	rd, err := m.ReadRows(context.Background(), ids, opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []arrow.RecordBatch
	for {
		rec, err := rd.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
	if done != nil {
		done(rd)
	}
	rd.Close()
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return out
}
