package matview

import (
	"context"
	"fmt"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
)

// cappedSteps are the source writes of issue 24's capped-view report, on a
// 20k-row source: an append of 3 rows (one matching id % 3 = 0), an update
// of id < 100 (34 held rows, moved by LanceDB to the fragment the update
// writes: the end of the scan order), a delete of 20 held rows.
var cappedSteps = []struct {
	name string
	do   func(d *lancedbtest.Driver, src string) (uint64, error)
}{
	{"append", func(d *lancedbtest.Driver, src string) (uint64, error) {
		return d.Add(src, lancedbtest.SourceRows(50000, 50003, 0))
	}},
	{"update", func(d *lancedbtest.Driver, src string) (uint64, error) {
		r, err := d.Update(src, "id < 100", map[string]string{"score": "score + 1"})
		return r.Version, err
	}},
	{"delete", func(d *lancedbtest.Driver, src string) (uint64, error) {
		return d.Delete(src, "id >= 200 AND id < 260 AND id % 3 = 0")
	}},
}

// TestCappedViewDifferential: a view with LIMIT 500 over a 20k-row source
// (id % 3 = 0) holds, row for row and in order, what LanceDB's own view of
// the same definition holds after LanceDB's refresh, and what LanceDB's
// query with the limit returns at the watermark: the first 500 matching
// rows in scan order. The writes are refreshed in one span (the report's
// case) and one by one.
func TestCappedViewDifferential(t *testing.T) {
	lancedbtest.Require(t)
	ctx := context.Background()
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	db := openDB(t, dir)
	spec := lancedbtest.ViewSpec{
		Select: []lancedbtest.Projection{{Name: "id"}, {Name: "amount"}},
		Where:  "id % 3 = 0",
		Limit:  lancedbtest.Limit(500),
	}
	for _, each := range []bool{false, true} {
		t.Run(map[bool]string{false: "one-span", true: "each-write"}[each], func(t *testing.T) {
			src := map[bool]string{false: "src_span", true: "src_each"}[each]
			must[uint64](t)(d.CreateTable(src, lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 20000, 0)))
			mv, twin := src+"_mvd", src+"_ldb"
			v := must[*View](t)(db.CreateView(ctx, mv, src, toDefinition(spec)))
			must[lancedbtest.Definition](t)(d.CreateView(twin, src, spec))
			refresh := func(step string) {
				t.Helper()
				r, err := v.Refresh(ctx, RefreshOptions{})
				if err != nil {
					t.Fatalf("after %s: %v", step, err)
				}
				must[lancedbtest.RefreshResult](t)(d.Refresh(twin, lancedbtest.RefreshOptions{}))
				got := must[*lancedbtest.Scan](t)(d.Read(mv, lancedbtest.ReadOptions{}))
				want := must[*lancedbtest.Scan](t)(d.Read(twin, lancedbtest.ReadOptions{}))
				if err := lancedbtest.CompareCapped(got.Rows, want.Rows); err != nil {
					t.Errorf("after %s (mvd: %s %s): mvd's view vs LanceDB's: %v", step, r.Mode, r.Reason, err)
				}
				if err := d.CheckView(mv, r.SourceVersion); err != nil {
					t.Errorf("after %s: %v", step, err)
				}
				t.Logf("after %s: mvd %s, %d rows written", step, r.Mode, r.RowsWritten)
			}
			refresh("create")
			for i, s := range cappedSteps {
				must[uint64](t)(s.do(d, src))
				if each || i == len(cappedSteps)-1 {
					refresh(fmt.Sprintf("%s (step %d)", s.name, i+1))
				}
			}
		})
	}
}
