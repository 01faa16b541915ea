package matview

import (
	"context"
	"fmt"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
)

// compactAll runs forced compaction steps until none is left and
// returns the view version reached.
func compactAll(t *testing.T, v *View, o CompactOptions) (steps int) {
	t.Helper()
	o.Force = true
	for {
		r, err := v.Compact(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if r.Version != 0 {
			steps++
		}
		if !r.More {
			return steps
		}
	}
}

// TestCompactKeepsViewsIntact: views mvd refreshed after many one-row
// LanceDB commits (appends, updates, deletes) are compacted by mvd; then
// they hold the same rows, LanceDB's refresh of each is no_op (never a
// drift rebuild) and mvd's next refresh after an append is incremental;
// views over a compacted view (mvd's and LanceDB's) stay incremental.
func TestCompactKeepsViewsIntact(t *testing.T) {
	lancedbtest.Require(t)
	ctx := context.Background()
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	must[uint64](t)(d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 40, 0)))
	db := openDB(t, dir)
	views := map[string]*View{}
	for name, spec := range map[string]lancedbtest.ViewSpec{"all": {}, "proj": interopSpecs["proj"]} {
		views[name] = must[*View](t)(db.CreateView(ctx, name, "src", toDefinition(spec)))
	}
	views["down"] = must[*View](t)(db.CreateView(ctx, "down", "all", Definition{Where: "id % 2 = 0"}))
	must[lancedbtest.Definition](t)(d.CreateView("ldown", "all", lancedbtest.ViewSpec{Where: "id % 3 = 0"}))
	refreshAll := func(want ...Mode) {
		t.Helper()
		for _, name := range []string{"all", "proj", "down"} {
			r := must[*Result](t)(views[name].Refresh(ctx, RefreshOptions{}))
			if len(want) > 0 && r.Mode != want[0] {
				t.Fatalf("%s: refresh %+v, want %s", name, r, want[0])
			}
		}
	}
	refreshAll()
	must[lancedbtest.RefreshResult](t)(d.Refresh("ldown", lancedbtest.RefreshOptions{}))
	for i := int64(40); i < 70; i++ {
		switch {
		case i%10 == 3:
			must[uint64](t)(d.Delete("src", fmt.Sprintf("id = %d", i-20)))
		case i%10 == 7:
			must[lancedbtest.UpdateResult](t)(d.Update("src", fmt.Sprintf("id = %d", i-30), map[string]string{"amount": "amount + 50"}))
		default:
			must[uint64](t)(d.Add("src", lancedbtest.SourceRows(i, i+1, 0)))
		}
		refreshAll()
	}
	must[lancedbtest.RefreshResult](t)(d.Refresh("ldown", lancedbtest.RefreshOptions{}))
	before := map[string][]string{}
	for _, name := range []string{"all", "proj"} {
		vm := mustLatest(t, views[name])
		before[name] = rowsOf(t, vm)
		n := len(vm.Fragments)
		if n < 10 {
			t.Fatalf("%s: %d fragments before compaction, want many", name, n)
		}
		if steps := compactAll(t, views[name], CompactOptions{StepRows: 8}); steps < 2 {
			t.Fatalf("%s: %d compaction steps with 8 rows a step, want several", name, steps)
		}
		compactAll(t, views[name], CompactOptions{}) // the bounded groups together
		vm = mustLatest(t, views[name])
		if len(vm.Fragments) != 1 {
			t.Fatalf("%s: %d fragments after compaction (%d before)", name, len(vm.Fragments), n)
		}
		if got := rowsOf(t, vm); fmt.Sprint(got) != fmt.Sprint(before[name]) {
			t.Fatalf("%s: rows changed by compaction", name)
		}
		checkView(t, db, name)
		lr := must[lancedbtest.RefreshResult](t)(d.Refresh(name, lancedbtest.RefreshOptions{}))
		if lr.Mode != "no_op" || lr.Version != vm.Version {
			t.Fatalf("%s: LanceDB refresh after mvd's compaction: %+v, want no_op at %d", name, lr, vm.Version)
		}
	}
	// The views over the compacted view: nothing changed for them.
	if r := must[*Result](t)(views["down"].Refresh(ctx, RefreshOptions{})); r.Mode == ModeRebuild {
		t.Fatalf("down: refresh over upstream compaction: %+v", r)
	}
	checkView(t, db, "down")
	if lr := must[lancedbtest.RefreshResult](t)(d.Refresh("ldown", lancedbtest.RefreshOptions{})); lr.Mode == "rebuild" {
		t.Fatalf("ldown: LanceDB refresh over upstream compaction: %+v", lr)
	}
	// New source rows: incremental everywhere, and LanceDB agrees.
	must[uint64](t)(d.Add("src", lancedbtest.SourceRows(100, 102, 0)))
	refreshAll(ModeIncremental)
	for _, name := range []string{"all", "proj", "down"} {
		checkView(t, db, name)
		if lr := must[lancedbtest.RefreshResult](t)(d.Refresh(name, lancedbtest.RefreshOptions{})); lr.Mode != "no_op" {
			t.Fatalf("%s: LanceDB refresh after mvd's: %+v", name, lr)
		}
	}
	lr := must[lancedbtest.RefreshResult](t)(d.Refresh("ldown", lancedbtest.RefreshOptions{}))
	if lr.Mode != "incremental" {
		t.Fatalf("ldown: LanceDB refresh after an upstream append: %+v", lr)
	}
	if err := d.CheckView("ldown", lr.SourceVersion); err != nil {
		t.Fatal(err)
	}
}
