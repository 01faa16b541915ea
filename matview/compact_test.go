package matview

import (
	"context"
	"errors"
	"fmt"
	"path"
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
	t.Parallel()
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

// TestCompactRaces: a compaction whose commit loses the race to another
// writer's commit never loses that writer's rows: over a refresh from
// another process that only appended, it commits again on the newer
// version; over a LanceDB delete (or an eviction) in the fragments it
// rewrote, it gives up, removes its files, and the next step compacts.
// LanceDB's refresh stays no_op over every outcome that mvd committed.
func TestCompactRaces(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	must[uint64](t)(d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 10, 0)))
	db := openDB(t, dir)
	v := must[*View](t)(db.CreateView(ctx, "all", "src", Definition{}))
	must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	for i := int64(10); i < 20; i++ {
		must[uint64](t)(d.Add("src", lancedbtest.SourceRows(i, i+1, 0)))
		must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	}
	other := openDB(t, dir) // another refresher: its own View and lock
	ov := must[*View](t)(other.OpenView(ctx, "all"))

	// 1. Another refresher appends meanwhile: the compaction lands after it.
	v.beforeCompactCommit = func() {
		must[uint64](t)(d.Add("src", lancedbtest.SourceRows(20, 21, 0)))
		if r := must[*Result](t)(ov.Refresh(ctx, RefreshOptions{})); r.Mode != ModeIncremental {
			t.Fatalf("the racing refresh: %+v", r)
		}
	}
	r := must[*CompactResult](t)(v.Compact(ctx, CompactOptions{Force: true}))
	m := mustLatest(t, v)
	if r.Version != m.Version || len(m.Fragments) != 2 {
		t.Fatalf("compaction over a racing append: %+v, view at %d with %d fragments", r, m.Version, len(m.Fragments))
	}
	checkView(t, db, "all")
	if lr := must[lancedbtest.RefreshResult](t)(d.Refresh("all", lancedbtest.RefreshOptions{})); lr.Mode != "no_op" {
		t.Fatalf("LanceDB refresh after a compaction that won on retry: %+v", lr)
	}

	// 2. LanceDB deletes a view row the compaction rewrites: the
	// compaction gives up; the delete stays.
	for i := int64(21); i < 25; i++ {
		must[uint64](t)(d.Add("src", lancedbtest.SourceRows(i, i+1, 0)))
		must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	}
	v.beforeCompactCommit = func() { must[uint64](t)(d.Delete("all", "id = 22")) }
	files := dataFiles(t, v)
	if _, err := v.Compact(ctx, CompactOptions{Force: true}); !errors.Is(err, ErrConflict) {
		t.Fatalf("compaction over a LanceDB delete of its rows: %v, want ErrConflict", err)
	}
	if got := dataFiles(t, v); got != files {
		t.Fatalf("the lost compaction left files behind: %d data files, %d before", got, files)
	}
	n := must[uint64](t)(d.Count("all", 0))
	if n != 24 {
		t.Fatalf("view holds %d rows after LanceDB's delete, want 24", n)
	}
	v.beforeCompactCommit = nil
	must[*CompactResult](t)(v.Compact(ctx, CompactOptions{Force: true}))
	if got := must[uint64](t)(d.Count("all", 0)); got != n {
		t.Fatalf("view holds %d rows after the next compaction, want %d", got, n)
	}
}

// dataFiles counts the view's data files on disk.
func dataFiles(t *testing.T, v *View) int {
	t.Helper()
	names, err := v.db.fs.ReadDir(path.Join(v.table.Root(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	return len(names)
}

// TestCompactLeavesIndexedFragments: fragments an index on the view
// covers are left as they are (their index coverage would name fragments
// that are gone); the tail appended after the index is compacted, and
// LanceDB's indexed queries still find every row once.
func TestCompactLeavesIndexedFragments(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	must[uint64](t)(d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 10, 0)))
	db := openDB(t, dir)
	v := must[*View](t)(db.CreateView(ctx, "all", "src", Definition{}))
	add := func(lo, hi int64) {
		for i := lo; i < hi; i++ {
			must[uint64](t)(d.Add("src", lancedbtest.SourceRows(i, i+1, 0)))
			must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
		}
	}
	add(10, 14)
	must[uint64](t)(d.CreateIndex("all", "id", "btree"))
	indexed := len(mustLatest(t, v).Fragments)
	add(14, 20)
	must[*CompactResult](t)(v.Compact(ctx, CompactOptions{Force: true}))
	if n := len(mustLatest(t, v).Fragments); n != indexed+1 {
		t.Fatalf("%d fragments after compaction, want the %d indexed ones and one for the tail", n, indexed)
	}
	for _, where := range []string{"id = 12", "id = 17", "id >= 0"} {
		s := must[*lancedbtest.Scan](t)(d.Read("all", lancedbtest.ReadOptions{Columns: []string{"id"}, Where: where}))
		want := map[string]int{"id = 12": 1, "id = 17": 1, "id >= 0": 20}[where]
		if len(s.Rows) != want {
			t.Fatalf("LanceDB query %q on the view: %d rows, want %d", where, len(s.Rows), want)
		}
	}
	if lr := must[lancedbtest.RefreshResult](t)(d.Refresh("all", lancedbtest.RefreshOptions{})); lr.Mode == "rebuild" {
		t.Fatalf("LanceDB refresh after the compaction: %+v", lr)
	}
}
