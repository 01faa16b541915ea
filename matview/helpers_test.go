package matview

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datafile"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/vfs"
)

// srcSchema is the schema of the Go-written test sources.
var srcSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// rowsBatch builds rows id lo..hi-1 with name "n<id>" and amount id%100.
func rowsBatch(lo, hi int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, srcSchema)
	defer b.Release()
	for i := lo; i < hi; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("n%d", i))
		b.Field(2).(*array.Float64Builder).Append(float64(i % 100))
	}
	return b.NewRecordBatch()
}

// goSource is a source table written by mvd's own writer (append and
// delete; updates need LanceDB).
type goSource struct {
	t    *lance.Table
	dir  string
	name string
}

func newGoSource(t testing.TB, fsys vfs.FS, dir, name string, n int64) *goSource {
	t.Helper()
	ls, err := lance.NewSchemaFromArrow(srcSchema)
	if err != nil {
		t.Fatal(err)
	}
	root := path.Join(dir, name+lance.TableSuffix)
	rec := rowsBatch(0, n)
	defer rec.Release()
	var frags []lance.NewFragment
	if n > 0 {
		if frags, err = datawriter.WriteFragments(fsys, root, ls, "2.2", []arrow.RecordBatch{rec}); err != nil {
			t.Fatal(err)
		}
	}
	tbl, _, err := lance.Create(context.Background(), fsys, root, lance.CreateOptions{Schema: ls, Fragments: frags})
	if err != nil {
		t.Fatal(err)
	}
	return &goSource{t: tbl, dir: dir, name: name}
}

func (s *goSource) append(t testing.TB, lo, hi int64) {
	t.Helper()
	m, err := s.t.Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rec := rowsBatch(lo, hi)
	defer rec.Release()
	frags, err := datawriter.WriteFragments(s.t.FS(), s.t.Root(), m.Schema, m.DataFileVersion, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.t.Commit(context.Background(), m, &lance.Commit{Fragments: frags}); err != nil {
		t.Fatal(err)
	}
}

// deleteIDs deletes the rows whose id column is in ids (row id == id for
// rows appended in order from an empty table).
func (s *goSource) deleteWhere(t *testing.T, keep func(id int64) bool) {
	t.Helper()
	m, err := s.t.Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	del := roaring64.New()
	sc, err := m.Scan(context.Background(), lance.ScanOptions{Columns: []string{"id"}, RowMeta: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	for {
		rec, err := sc.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ids := rec.Column(0).(*array.Int64)
		rids := rec.Column(1).(*array.Uint64)
		for i := 0; i < ids.Len(); i++ {
			if !keep(ids.Value(i)) {
				del.Add(rids.Value(i))
			}
		}
		rec.Release()
	}
	if _, err := s.t.Commit(context.Background(), m, &lance.Commit{DeleteRowIDs: del}); err != nil {
		t.Fatal(err)
	}
}

// rowsOf reads every row of a table version as JSON lines (columns in
// schema order), sorted, skipping the named columns.
func rowsOf(t *testing.T, m *lance.Snapshot, skip ...string) []string {
	t.Helper()
	sc, err := m.Scan(context.Background(), lance.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var out []string
	for {
		rec, err := sc.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, jsonRows(t, rec, skip...)...)
		rec.Release()
	}
	slices.Sort(out)
	return out
}

func jsonRows(t *testing.T, rec arrow.RecordBatch, skip ...string) []string {
	t.Helper()
	var out []string
	for i := 0; i < int(rec.NumRows()); i++ {
		var b strings.Builder
		for c := 0; c < int(rec.NumCols()); c++ {
			name := rec.Schema().Field(c).Name
			if slices.Contains(skip, name) {
				continue
			}
			v, err := datafile.AppendJSON(nil, rec.Column(c), i)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s=%s;", name, v)
		}
		out = append(out, b.String())
	}
	return out
}

// oracle evaluates a view's definition on the source at version v from
// scratch (every row, no cap): the rows the view must hold.
func oracle(t *testing.T, src *lance.Table, version uint64, def *plan.Definition) []string {
	t.Helper()
	m, err := src.Checkout(context.Background(), version)
	if err != nil {
		t.Fatal(err)
	}
	as, err := m.Schema.Arrow()
	if err != nil {
		t.Fatal(err)
	}
	d := *def
	d.Limit = nil
	p, err := plan.Compile(d, as)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := m.Scan(context.Background(), lance.ScanOptions{RowMeta: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var out []string
	for {
		rec, err := sc.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		v, err := p.Apply(memory.DefaultAllocator, rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, jsonRows(t, v)...)
		v.Release()
	}
	slices.Sort(out)
	return out
}

// checkView asserts the view holds the definition evaluated on its source
// at the version it reflects (a capped view: a subset of the right size).
func checkView(t *testing.T, db *DB, name string) {
	t.Helper()
	v, err := db.OpenView(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := v.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	src, err := db.openTable(context.Background(), info.Definition.SourceTable)
	if err != nil {
		t.Fatal(err)
	}
	want := oracle(t, src, info.Watermark.SourceVersion, info.Definition)
	vm, err := v.Table().Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := rowsOf(t, vm)
	if l := info.Definition.Limit; l != nil {
		n := min(int(*l), len(want))
		if len(got) != n {
			t.Fatalf("view %s holds %d rows, want min(limit %d, %d)", name, len(got), *l, len(want))
		}
		for _, r := range got {
			if _, ok := slices.BinarySearch(want, r); !ok {
				t.Fatalf("view %s holds row %s, which the definition does not give", name, r)
			}
		}
		if len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Fatalf("view %s holds a row twice", name)
		}
		return
	}
	if !slices.Equal(got, want) {
		t.Fatalf("view %s at source version %d:\n got %d rows %.5q\nwant %d rows %.5q", name, info.Watermark.SourceVersion, len(got), got, len(want), want)
	}
}

func mustLatest(t *testing.T, v *View) *lance.Snapshot {
	t.Helper()
	m, err := v.Table().Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// openDB opens the database in dir and closes it when the test ends,
// before its directory is removed: Close waits for the version hints
// refreshes write in the background.
func openDB(t testing.TB, dir string) *DB {
	t.Helper()
	return openDBWith(t, dir, Options{})
}

// openDBWith is openDB with options.
func openDBWith(t testing.TB, dir string, o Options) *DB {
	t.Helper()
	db, err := OpenWith(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}
