package rebuild

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/vfs"
)

var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "kind", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// testTable writes a table of fragments of the given sizes (ids counted
// from 0; kind one of four, or null; amount id%100) with mvd's writer.
func testTable(t *testing.T, sizes ...int) *lance.Snapshot {
	t.Helper()
	ls, err := lance.NewSchemaFromArrow(testSchema)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "src.lance")
	var frags []lance.NewFragment
	id := int64(0)
	for _, n := range sizes {
		b := array.NewRecordBuilder(memory.DefaultAllocator, testSchema)
		for range n {
			b.Field(0).(*array.Int64Builder).Append(id)
			if id%9 == 4 {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.StringBuilder).Append([]string{"purchase", "refund", "view", "cart"}[id%4])
			}
			b.Field(2).(*array.Float64Builder).Append(float64(id % 100))
			id++
		}
		rec := b.NewRecordBatch()
		b.Release()
		f, err := datawriter.WriteFragments(vfs.OS(), root, ls, "2.2", []arrow.RecordBatch{rec})
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		frags = append(frags, f...)
	}
	_, m, err := lance.Create(context.Background(), vfs.OS(), root, lance.CreateOptions{Schema: ls, Fragments: frags})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func compilePlan(t *testing.T, sel, where string) *plan.Plan {
	t.Helper()
	projs, err := plan.ParseSelect(sel)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compile(plan.Definition{SourceTable: "src", Projections: projs, Filter: where}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// rowsOf renders every row of recs.
func rowsOf(recs []arrow.RecordBatch) []string {
	var out []string
	for _, r := range recs {
		for i := range int(r.NumRows()) {
			s := ""
			for _, c := range r.Columns() {
				s += c.ValueStr(i) + "|"
			}
			out = append(out, s)
		}
	}
	return out
}

// reference is the view the plain way: one scan of every column, the
// whole plan applied to each batch.
func reference(t *testing.T, m *lance.Snapshot, p *plan.Plan) []string {
	t.Helper()
	sc, err := m.Scan(context.Background(), lance.ScanOptions{Columns: p.Columns(), RowMeta: true, NoRowVersions: true, BatchSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var recs []arrow.RecordBatch
	_, err = Feed(context.Background(), sc.Next, p, memory.DefaultAllocator, 0, false, func(rec arrow.RecordBatch) error {
		rec.Retain()
		recs = append(recs, rec)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	return rowsOf(recs)
}

// TestRunMatchesPlainScan: an uncapped rebuild, its fragments scanned in
// parallel and filtered before the projected columns are read, sends the
// rows a plain scan and Apply give, in the same order, for any number of
// workers; nothing is left allocated.
func TestRunMatchesPlainScan(t *testing.T) {
	m := testTable(t, 700, 1, 0, 2500, 33, 1200)
	for _, c := range []struct{ sel, where string }{
		{"id, amount * 100 AS cents", "kind = 'purchase' AND amount > 10"},
		{"id, kind, amount", ""},
		{"id", "kind IS NULL OR amount > 98"},
		{"kind, upper(kind) AS k", "amount < 0"},
		{"id", "kind = 'nothing'"},
		{"amount", "true"},
	} {
		p := compilePlan(t, c.sel, c.where)
		want := reference(t, m, p)
		for _, job := range []struct {
			workers int
			rows    uint64
		}{{1, 1}, {2, 1}, {4, 1}, {2, 1000}, {3, jobRows}} {
			workers := job.workers
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			var recs []arrow.RecordBatch
			n, err := runFragments(context.Background(), m, p, mem, fragOpts{workers: workers, minRows: job.rows}, func(rec arrow.RecordBatch) error {
				if !rec.Schema().Equal(p.Schema()) {
					return fmt.Errorf("batch schema %s, want %s", rec.Schema(), p.Schema())
				}
				rec.Retain()
				recs = append(recs, rec)
				return nil
			})
			if err != nil {
				t.Fatalf("%s WHERE %s: %v", c.sel, c.where, err)
			}
			got := rowsOf(recs)
			for _, r := range recs {
				r.Release()
			}
			if int(n) != len(want) || !reflect.DeepEqual(got, want) && len(want) > 0 {
				t.Fatalf("%s WHERE %s (%d workers): %d rows sent, %d got, want %d", c.sel, c.where, workers, n, len(got), len(want))
			}
			mem.AssertSize(t, 0)
		}
	}
}

// TestRunStopsOnError: a failing sink or a cancelled context ends the
// rebuild with that error (never as the end of the source) and releases
// every batch still queued.
func TestRunStopsOnError(t *testing.T) {
	m := testTable(t, 9000, 900, 20000, 900, 900)
	p := compilePlan(t, "id, amount", "")
	boom := errors.New("disk on fire")
	for _, after := range []int{0, 1, 3} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		calls := 0
		_, err := runFragments(context.Background(), m, p, mem, fragOpts{workers: 2, minRows: 1}, func(rec arrow.RecordBatch) error {
			if calls++; calls > after {
				return boom
			}
			return nil
		})
		if !errors.Is(err, boom) {
			t.Fatalf("sink failing after %d batches: %v", after, err)
		}
		mem.AssertSize(t, 0)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	ctx, cancel := context.WithCancel(context.Background())
	_, err := runFragments(ctx, m, p, mem, fragOpts{workers: 2, minRows: 1}, func(rec arrow.RecordBatch) error {
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		t.Fatalf("cancelled: %v", err)
	}
	mem.AssertSize(t, 0)
}
