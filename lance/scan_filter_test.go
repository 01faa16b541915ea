package lance_test

import (
	"context"
	"errors"
	"hash/fnv"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/arrowjson"
	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datafile"
	"github.com/mvd-project/mvd/vfs"
)

// keepRow is the test's predicate: a hash of the filter columns' values
// (dictionary or not, a value reads the same), keeping about two rows in
// three (dense) or one in eight (sparse: takes read single values out of
// bitpacked words).
func keepRow(cols []arrow.Array, i int, sparse bool) bool {
	h := fnv.New32a()
	for _, c := range cols {
		h.Write([]byte(c.ValueStr(i)))
		h.Write([]byte{0})
	}
	if sparse {
		return h.Sum32()%8 == 0
	}
	return h.Sum32()%3 != 0
}

// TestFilteredScanMatchesScan: a scan filtered before the other columns
// are read returns exactly the rows (values and row metadata) of a full
// scan filtered afterwards, over LanceDB tables with many fragments,
// deletions, updated rows, a column added later, dictionary-encoded
// strings and nullable strings; the dictionary path is taken.
func TestFilteredScanMatchesScan(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	if _, err := d.CreateEvents("events", 6000, 1000, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Delete("events", "id % 7 = 3 OR (id >= 2000 AND id < 3000)"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Update("events", "id % 11 = 0", map[string]string{"amount": "100 - amount"}); err != nil {
		t.Fatal(err)
	}
	var rows []lancedbtest.Record
	for i := range 3000 {
		r := lancedbtest.Record{"id": i, "k": []string{"red", "green", "blue"}[i%3], "v": float64(i%97) / 3}
		if i%5 == 0 {
			r["k"] = nil
		}
		rows = append(rows, r)
	}
	schema := arrowjson.Schema{Fields: []arrowjson.Field{{Name: "id", Type: "int64"}, {Name: "k", Type: "utf8", Nullable: true}, {Name: "v", Type: "float64", Nullable: true}}}
	if _, err := d.CreateTable("nulls", schema, rows); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Add("nulls", rows[:1500]); err != nil {
		t.Fatal(err)
	}
	if _, err := d.AddColumns("nulls", lancedbtest.Column{Name: "w", SQL: "v * 2"}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		table       string
		out, filter []string
	}{
		{"events", []string{"id", "user"}, []string{"kind", "amount"}},
		{"events", []string{"id", "user", "amount"}, []string{"kind", "amount"}},
		{"events", []string{"kind", "tags", "ts"}, []string{"kind"}},
		{"events", []string{"id"}, []string{"user"}},
		{"events", []string{"id", "amount"}, nil},
		{"events", nil, []string{"tags"}},
		{"events", []string{"id", "tags"}, []string{"tags", "ts"}},
		{"nulls", []string{"id", "w"}, []string{"k"}},
		{"nulls", []string{"k", "v"}, []string{"k", "v"}},
		{"nulls", []string{"id"}, []string{"w"}},
	}
	var dictSeen atomic.Int64
	for k := range 2 * len(cases) {
		c, sparse := cases[k/2], k%2 == 1
		tbl, err := lance.Open(ctx, vfs.OS(), filepath.Join(dir, c.table+".lance"))
		if err != nil {
			t.Fatal(err)
		}
		m, err := tbl.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, meta := range []lance.ScanOptions{{RowMeta: true, NoRowVersions: true}, {RowMeta: true}, {}} {
			name := c.table + "/" + strings.Join(c.out, ",") + "/" + strings.Join(c.filter, ",")
			// The reference: every column, filtered here.
			all := append(append([]string{}, c.out...), c.filter...)
			all = uniq(all)
			ref := meta
			ref.Columns, ref.BatchSize = all, 333
			want := wantFiltered(t, scanBatches(t, m, ref), c.filter, c.out, sparse)
			for _, dicts := range []bool{true, false} {
				opts := meta
				opts.Columns, opts.BatchSize = c.out, 500
				if c.out == nil {
					opts.Columns = []string{}
				}
				opts.Filter = &lance.ScanFilter{Columns: c.filter, Dictionaries: dicts, Select: func(rec arrow.RecordBatch) ([]int, error) {
					var sel []int
					for i := range int(rec.NumRows()) {
						if keepRow(rec.Columns(), i, sparse) {
							sel = append(sel, i)
						}
					}
					for _, col := range rec.Columns() {
						if _, ok := col.(*array.Dictionary); ok {
							if !dicts {
								t.Errorf("%s: a dictionary array without Dictionaries", name)
							}
							dictSeen.Add(1)
						}
					}
					return sel, nil
				}}
				var got []map[string]any
				for _, rec := range scanBatches(t, m, opts) {
					if rec.NumRows() == 0 || rec.NumRows() > 500 {
						t.Fatalf("%s: a batch of %d rows", name, rec.NumRows())
					}
					got = append(got, recordJSON(t, rec)...)
					rec.Release()
				}
				if len(got) != len(want) {
					t.Fatalf("%s (dictionaries %v): %d rows, want %d", name, dicts, len(got), len(want))
				}
				for i := range got {
					if !reflect.DeepEqual(got[i], want[i]) {
						t.Fatalf("%s (dictionaries %v) row %d: %v, want %v", name, dicts, i, got[i], want[i])
					}
				}
			}
		}
	}
	if dictSeen.Load() == 0 {
		t.Fatal("no filter column came as a dictionary: the events' kind should")
	}
}

// TestReadFieldChunkDict: a dictionary chunk, from a page's start or from
// inside it, holds the values ReadFieldChunk decodes.
func TestReadFieldChunkDict(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	if _, err := d.CreateEvents("events", 3000, 3000, 5); err != nil {
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
	f := m.Fragments[0]
	name := filepath.Join(dir, "events.lance", "data", f.Files[0].Path)
	file, err := vfs.OS().Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	rd, err := datafile.Open(file, file.Size(), name)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, col := range []string{"kind", "user", "id"} {
		fld := m.Schema.FieldByName(col)
		af, err := fld.Arrow()
		if err != nil {
			t.Fatal(err)
		}
		for _, start := range []uint64{0, 1, 1023, 1024, 2999} {
			a, lo, hi, ok, err := rd.ReadFieldChunkDict(ctx, fld.ID, af.Type, start, mem)
			if err != nil {
				t.Fatal(err)
			}
			if col != "kind" {
				if ok {
					t.Fatalf("%s: read as a dictionary", col)
				}
				continue
			}
			if !ok {
				t.Fatalf("kind at %d: not read as a dictionary", start)
			}
			w, wlo, whi, err := rd.ReadFieldChunk(ctx, fld.ID, af.Type, start, 1<<20, mem)
			if err != nil {
				t.Fatal(err)
			}
			if lo != start || lo != wlo || hi != whi || a.Len() != w.Len() {
				t.Fatalf("kind at %d: [%d, %d) of %d rows, ReadFieldChunk [%d, %d) of %d", start, lo, hi, a.Len(), wlo, whi, w.Len())
			}
			for i := range a.Len() {
				if a.ValueStr(i) != w.ValueStr(i) {
					t.Fatalf("kind row %d: %q, want %q", int(lo)+i, a.ValueStr(i), w.ValueStr(i))
				}
			}
			a.Release()
			w.Release()
		}
	}
}

func scanBatches(t *testing.T, m *lance.Snapshot, opts lance.ScanOptions) []arrow.RecordBatch {
	t.Helper()
	sc, err := m.Scan(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var out []arrow.RecordBatch
	for {
		rec, err := sc.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
}

// wantFiltered is what a filtered scan must return: the rows of recs
// (which it releases) that keepRow keeps over the filter columns, as JSON,
// with only the out columns and the row metadata.
func wantFiltered(t *testing.T, recs []arrow.RecordBatch, filter, out []string, sparse bool) []map[string]any {
	t.Helper()
	var want []map[string]any
	for _, rec := range recs {
		cols := make([]arrow.Array, len(filter))
		for k, f := range filter {
			cols[k] = rec.Column(rec.Schema().FieldIndices(f)[0])
		}
		for i, r := range recordJSON(t, rec) {
			if keepRow(cols, i, sparse) {
				for k := range r {
					if !isOut(k, out) {
						delete(r, k)
					}
				}
				want = append(want, r)
			}
		}
		rec.Release()
	}
	return want
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func isOut(name string, out []string) bool {
	if strings.HasPrefix(name, "_row") {
		return true
	}
	for _, o := range out {
		if o == name {
			return true
		}
	}
	return false
}
