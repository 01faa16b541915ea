package rebuild

import (
	"context"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/vfs"
)

// cappedPlan compiles sel WHERE where LIMIT limit over testSchema.
func cappedPlan(t *testing.T, sel, where string, limit uint64) *plan.Plan {
	t.Helper()
	projs, err := plan.ParseSelect(sel)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compile(plan.Definition{SourceTable: "src", Projections: projs, Filter: where, Limit: &limit}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// bytesOfRun rebuilds p over m's table reopened through a CountingFS and
// returns the view rows and the bytes the rebuild read (the table's
// manifest and row metadata are read before counting starts).
func bytesOfRun(t *testing.T, m *lance.Snapshot, p *plan.Plan) ([]string, int64) {
	t.Helper()
	ctx := context.Background()
	cfs := vfs.NewCountingFS(vfs.OS(), nil)
	tbl, err := lance.Open(ctx, cfs, m.Table().Root())
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Checkout(ctx, m.Version)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snap.CountRows(ctx); err != nil { // deletion files, row ids
		t.Fatal(err)
	}
	cfs.Reset()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	var recs []arrow.RecordBatch
	if _, err := Run(ctx, snap, p, mem, func(rec arrow.RecordBatch) error {
		rec.Retain()
		recs = append(recs, rec)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	rows := rowsOf(recs)
	for _, r := range recs {
		r.Release()
	}
	mem.AssertSize(t, 0)
	return rows, cfs.BytesRead()
}

// TestRunLateMaterialization: a filtered rebuild, capped or not, reads the
// projected columns only where rows pass: with no passing row (or a few
// in the last fragment, or the cap's first rows only) it reads about what
// reading the filter's column alone reads, far less than the projected
// columns hold; its rows are those of a plain scan with the whole plan
// applied.
func TestRunLateMaterialization(t *testing.T) {
	m := testTable(t, 30000, 30000, 30000)
	last := "id >= 89990"
	for _, c := range []struct {
		name  string
		where string
		limit *uint64
	}{
		{"uncapped, none pass", "amount > 1000", nil},
		{"capped, none pass", "amount > 1000", ptr(10)},
		{"capped, last rows pass", last, ptr(5)},
		{"uncapped, last rows pass", last, nil},
		{"capped, every row passes", "amount >= 0", ptr(5)},
	} {
		t.Run(c.name, func(t *testing.T) {
			plans := func(sel string) *plan.Plan {
				if c.limit == nil {
					return compilePlan(t, sel, c.where)
				}
				return cappedPlan(t, sel, c.where, *c.limit)
			}
			col := "amount"
			if c.where == last {
				col = "id"
			}
			p := plans("id, kind, amount * 2 AS a2")
			got, wide := bytesOfRun(t, m, p)
			_, narrow := bytesOfRun(t, m, plans(col))
			_, all := bytesOfRun(t, m, compilePlan(t, "id, kind, amount", ""))
			want := reference(t, m, p)
			if c.limit != nil && uint64(len(want)) > *c.limit {
				want = want[:*c.limit]
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("rows %v, want %v", got, want)
			}
			// The passing rows' pages (one per column at most) are the
			// only projected bytes allowed beyond the filter's.
			if slack := (all - narrow) / 8; wide > narrow+slack {
				t.Fatalf("read %d bytes; the filter's column alone reads %d, every column %d", wide, narrow, all)
			}
			t.Logf("read %d bytes; the filter's column alone %d, every column %d", wide, narrow, all)
		})
	}
}

func ptr(n uint64) *uint64 { return &n }
