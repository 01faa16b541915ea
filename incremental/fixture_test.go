package incremental

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/provenance"
	"github.com/mvd-project/mvd/rebuild"
	"github.com/mvd-project/mvd/vfs"
)

// srcSchema is the schema of the Go-written sources: id, amount = id % 10.
var srcSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "amount", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

func rowsBatch(lo, hi int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, srcSchema)
	defer b.Release()
	for i := lo; i < hi; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.Int64Builder).Append(i % 10)
	}
	return b.NewRecordBatch()
}

// fixture is a source table and a view of it kept by Step alone: the view
// is a Lance table of the plan's rows, its index a provenance.Index, and
// each step commits the evictions and the rows Step sent, as matview does.
type fixture struct {
	t     *testing.T
	ctx   context.Context
	src   *lance.Table
	plan  *plan.Plan
	view  *lance.Table
	index *provenance.Index
	at    *lance.Snapshot // the source version the view reflects
}

// newGoSource creates a source of rows 0..n-1 in one fragment, written by
// mvd's own writer (appends and deletes only).
func newGoSource(t *testing.T, dir string, n int64) *lance.Table {
	t.Helper()
	ls, err := lance.NewSchemaFromArrow(srcSchema)
	if err != nil {
		t.Fatal(err)
	}
	root := path.Join(dir, "src.lance")
	rec := rowsBatch(0, n)
	defer rec.Release()
	frags, err := datawriter.WriteFragments(vfs.OS(), root, ls, "2.2", []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	tbl, _, err := lance.Create(context.Background(), vfs.OS(), root, lance.CreateOptions{Schema: ls, Fragments: frags})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// appendRows appends rows lo..hi-1 as one new fragment.
func appendRows(t *testing.T, src *lance.Table, lo, hi int64) {
	t.Helper()
	m := latest(t, src)
	rec := rowsBatch(lo, hi)
	defer rec.Release()
	frags, err := datawriter.WriteFragments(src.FS(), src.Root(), m.Schema, m.DataFileVersion, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Commit(context.Background(), m, &lance.Commit{Fragments: frags}); err != nil {
		t.Fatal(err)
	}
}

// deleteIDs deletes the rows with these row ids (= ids in a Go source).
func deleteIDs(t *testing.T, src *lance.Table, ids ...uint64) {
	t.Helper()
	if _, err := src.Commit(context.Background(), latest(t, src), &lance.Commit{DeleteRowIDs: roaring64.BitmapOf(ids...)}); err != nil {
		t.Fatal(err)
	}
}

func latest(t *testing.T, tbl *lance.Table) *lance.Snapshot {
	t.Helper()
	m, err := tbl.Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// newFixture compiles the view (select list, filter, limit) over src and
// materializes it at the source's latest version with a rebuild.
func newFixture(t *testing.T, src *lance.Table, sel, where string, limit *uint64) *fixture {
	t.Helper()
	at := latest(t, src)
	as, err := at.Schema.Arrow()
	if err != nil {
		t.Fatal(err)
	}
	projs, err := plan.ParseSelect(sel)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compile(plan.Definition{Kind: plan.KindSelect, SourceTable: "src", Projections: projs, Filter: plan.NormalizeFilter(where), Limit: limit}, as)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ctx: context.Background(), src: src, plan: p, at: at}
	recs := f.expected(at)
	ls, err := lance.NewSchemaFromArrow(p.Schema())
	if err != nil {
		t.Fatal(err)
	}
	vdir, err := os.MkdirTemp(path.Dir(src.Root()), "view")
	if err != nil {
		t.Fatal(err)
	}
	root := path.Join(vdir, "view.lance")
	frags, err := datawriter.WriteFragments(vfs.OS(), root, ls, "2.2", recs)
	if err != nil {
		t.Fatal(err)
	}
	if f.view, _, err = lance.Create(f.ctx, vfs.OS(), root, lance.CreateOptions{Schema: ls, Fragments: frags}); err != nil {
		t.Fatal(err)
	}
	var srcIDs, viewIDs []uint64
	for _, r := range recs {
		srcIDs = append(srcIDs, sourceIDs(r)...)
		r.Release()
	}
	for i := range srcIDs {
		viewIDs = append(viewIDs, uint64(i))
	}
	if f.index, err = provenance.New(srcIDs, viewIDs, latest(t, f.view).Version); err != nil {
		t.Fatal(err)
	}
	return f
}

// expected is the view at source version at, by a rebuild (the first rows
// in scan order when capped).
func (f *fixture) expected(at *lance.Snapshot) []arrow.RecordBatch {
	var recs []arrow.RecordBatch
	_, err := rebuild.Run(f.ctx, at, f.plan, memory.DefaultAllocator, func(r arrow.RecordBatch) error {
		r.Retain()
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return recs
}

func sourceIDs(r arrow.RecordBatch) []uint64 {
	return slices.Clone(r.Column(int(r.NumCols()) - 1).(*array.Uint64).Uint64Values())
}

// step runs Step from the version the view reflects to the source's latest
// and, unless it asks for a rebuild, commits its result to the view.
func (f *fixture) step() *Output {
	f.t.Helper()
	to := latest(f.t, f.src)
	cs, err := lance.Changes(f.ctx, f.at, to)
	if err != nil {
		f.t.Fatal(err)
	}
	vm := latest(f.t, f.view)
	var recs []arrow.RecordBatch
	out, err := Step(f.ctx, Input{At: to, Changes: cs, Plan: f.plan, ViewAt: vm, Index: f.index}, func(r arrow.RecordBatch) error {
		r.Retain()
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if out.Rebuild != "" {
		if len(recs) > 0 {
			f.t.Fatalf("a step asking for a rebuild sent %d batches", len(recs))
		}
		return out
	}
	var sent []uint64
	for _, r := range recs {
		sent = append(sent, sourceIDs(r)...)
	}
	if !slices.Equal(sent, out.Added) {
		f.t.Fatalf("Added %v, sent %v", out.Added, sent)
	}
	c := &lance.Commit{DeleteRowIDs: out.Evict}
	if len(recs) > 0 {
		if c.Fragments, err = datawriter.WriteFragments(vfs.OS(), f.view.Root(), vm.Schema, vm.DataFileVersion, recs); err != nil {
			f.t.Fatal(err)
		}
	}
	if out.Evict.IsEmpty() && len(recs) == 0 {
		f.at = to // nothing changes in the view (matview commits the watermark alone)
		return out
	}
	m, err := f.view.Commit(f.ctx, vm, c)
	if err != nil {
		f.t.Fatal(err)
	}
	f.index.Apply(out.EvictedSources, out.Added, vm.NextRowID, m.Version)
	f.at = to
	return out
}

// check holds the view to a rebuild at the version it reflects: the same
// rows (as sets), and for a capped view in the same order.
func (f *fixture) check(what string) {
	f.t.Helper()
	want := f.expected(f.at)
	got := readAll(f.t, latest(f.t, f.view))
	w, g := rowLines(want), rowLines(got)
	if _, capped := f.plan.Limit(); !capped {
		slices.Sort(w)
		slices.Sort(g)
	}
	if !slices.Equal(w, g) {
		f.t.Fatalf("%s: view\n  %s\nwant\n  %s", what, strings.Join(g, "\n  "), strings.Join(w, "\n  "))
	}
	if uint64(f.index.Len()) != uint64(len(g)) {
		f.t.Fatalf("%s: index holds %d rows, view %d", what, f.index.Len(), len(g))
	}
}

func readAll(t *testing.T, m *lance.Snapshot) []arrow.RecordBatch {
	t.Helper()
	sc, err := m.Scan(context.Background(), lance.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var recs []arrow.RecordBatch
	for {
		r, err := sc.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return recs
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
}

// rowLines renders rows one line each and releases the batches.
func rowLines(recs []arrow.RecordBatch) []string {
	var out []string
	for _, r := range recs {
		for i := 0; i < int(r.NumRows()); i++ {
			var cells []string
			for c := 0; c < int(r.NumCols()); c++ {
				cells = append(cells, fmt.Sprintf("%s=%s", r.ColumnName(c), r.Column(c).ValueStr(i)))
			}
			out = append(out, strings.Join(cells, " "))
		}
		r.Release()
	}
	return out
}

func limit(n uint64) *uint64 { return &n }
