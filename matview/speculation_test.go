package matview

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/errorfs"
)

// countVersions is the number of manifests of a view.
func countVersions(t *testing.T, dir, view string) int {
	t.Helper()
	n := 0
	for _, e := range must[[]os.DirEntry](t)(os.ReadDir(filepath.Join(dir, view+lance.TableSuffix, "_versions"))) {
		if strings.HasSuffix(e.Name(), ".manifest") {
			n++
		}
	}
	return n
}

// noStagingLeft fails if a view's _versions/ holds a staging file, once
// the version hints the view's refreshes left to the background are
// written (their temporary files are not leftovers).
func noStagingLeft(t *testing.T, db *DB, dir, view string) {
	t.Helper()
	v := must[*View](t)(db.OpenView(context.Background(), view))
	v.Table().Flush()
	for _, e := range must[[]os.DirEntry](t)(os.ReadDir(filepath.Join(dir, view+lance.TableSuffix, "_versions"))) {
		if strings.HasPrefix(e.Name(), ".tmp") {
			t.Errorf("staging file %s left in %s", e.Name(), view)
		}
	}
}

// selectiveView makes a 200-row source "src" in a new database and the
// view "v" of its rows with amount >= 90, not yet refreshed.
func selectiveView(t *testing.T) (string, *goSource, *DB, *View) {
	t.Helper()
	dir := t.TempDir()
	src := newGoSource(t, vfs.OS(), dir, "src", 200)
	db := openDB(t, dir)
	v := must[*View](t)(db.CreateView(context.Background(), "v", "src", Definition{Where: "amount >= 90"}))
	return dir, src, db, v
}

// TestSpeculativeWatermarkCommit: once a view's refresh committed its
// watermark alone, the next one stages that commit while it reads the
// changes. Published when the changes leave the view as it is, dropped
// when they do not: either way one version per refresh, the right rows,
// and no staging file left.
func TestSpeculativeWatermarkCommit(t *testing.T) {
	ctx := context.Background()
	dir, src, db, v := selectiveView(t)
	refresh := func(wantRows uint64) {
		t.Helper()
		before := countVersions(t, dir, "v")
		r := must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
		if r.Mode != ModeIncremental || r.RowsWritten != wantRows {
			t.Fatalf("refresh: %+v, want incremental with %d rows", r, wantRows)
		}
		if n := countVersions(t, dir, "v"); n != before+1 {
			t.Fatalf("refresh made %d versions, want 1", n-before)
		}
		if wm := watermarkOf(mustLatest(t, v).Schema.Metadata); wm.SourceVersion != r.SourceVersion || wm.ViewVersion != r.Version {
			t.Fatalf("watermark %+v after %+v", wm, r)
		}
		checkView(t, db, "v")
		noStagingLeft(t, db, dir, "v")
	}
	must[*Result](t)(v.Refresh(ctx, RefreshOptions{})) // the rebuild
	// Rows the view does not hold: the first refresh learns, the next
	// ones speculate and publish.
	for i := range 3 {
		src.deleteWhere(t, func(id int64) bool { return id != int64(10+i) })
		refresh(0)
		if !v.speculates() {
			t.Fatal("a watermark-only refresh did not record it")
		}
	}
	if v.speculated != 2 {
		t.Fatalf("%d speculations published, want 2", v.speculated)
	}
	// Each was staged from the commit built ahead after the refresh
	// before it (the first refresh's commit already predicted the next).
	if v.prebuilt != v.speculated {
		t.Fatalf("%d of %d speculations staged from a commit built ahead", v.prebuilt, v.speculated)
	}
	// A change the view takes: the speculation is dropped, the commit
	// carries the row and an eviction.
	src.append(t, 290, 291)                                     // amount 90: in the view
	src.deleteWhere(t, func(id int64) bool { return id != 95 }) // in the view
	refresh(1)
	if v.speculated != 2 {
		t.Fatal("a speculation was published for a refresh that wrote rows")
	}
	// One refresh with rows does not stop the speculation; the next
	// watermark-only one publishes its own.
	if !v.speculates() {
		t.Fatal("one refresh with rows stopped the speculation")
	}
	src.deleteWhere(t, func(id int64) bool { return id != 20 })
	refresh(0)
	if v.speculated != 3 {
		t.Fatalf("%d speculations published, want 3", v.speculated)
	}
	// Two refreshes with rows in a row stop it; one watermark-only
	// refresh starts it again.
	for _, id := range []int64{96, 97} {
		src.deleteWhere(t, func(i int64) bool { return i != id }) // in the view
		refresh(0)
	}
	if v.speculates() {
		t.Fatal("two refreshes with rows in a row did not stop the speculation")
	}
	src.deleteWhere(t, func(id int64) bool { return id != 21 })
	refresh(0)
	if v.speculated != 3 || !v.speculates() {
		t.Fatalf("%d speculations published (want 3), speculating %v (want true)", v.speculated, v.speculates())
	}
	// LanceDB-visible state: a fresh handle reads the same.
	checkView(t, openDB(t, dir), "v")
}

// TestEarlySpeculationStale: a speculation staged on the source's head
// (earlyHead) is dropped when the refresh's snapshot turns out to be
// another version (here the head goes unused, as when its checkout
// fails, and the source has moved on); the refresh then speculates
// again on the version it reflects, commits once, and leaves no staging
// file.
func TestEarlySpeculationStale(t *testing.T) {
	ctx := context.Background()
	dir, src, db, v := selectiveView(t)
	must[*Result](t)(v.Refresh(ctx, RefreshOptions{})) // the rebuild
	src.deleteWhere(t, func(id int64) bool { return id != 10 })
	must[*Result](t)(v.Refresh(ctx, RefreshOptions{})) // learns: watermark only
	src.deleteWhere(t, func(id int64) bool { return id != 11 })

	v.mu.Lock()
	run, err := v.newRun(ctx, RefreshOptions{})
	if err != nil {
		v.mu.Unlock()
		t.Fatal(err)
	}
	if !run.stagesEarly() {
		v.mu.Unlock()
		t.Fatal("a refresh of the view would not stage early")
	}
	spec, head := run.earlyHead(ctx)
	if spec == nil || head == nil || head.Version != run.wm.SourceVersion+1 {
		v.mu.Unlock()
		t.Fatalf("no early speculation on head %+v (watermark %d)", head, run.wm.SourceVersion)
	}
	src.deleteWhere(t, func(id int64) bool { return id != 12 })
	before, published := countVersions(t, dir, "v"), v.speculated
	go spec.stage(ctx, v.table, run.vm)
	r, err := run.reconcile(ctx, nil, spec)
	run.end()
	v.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if r.Mode != ModeIncremental || r.SourceVersion != head.Version+1 {
		t.Fatalf("refresh %+v, want incremental to source version %d", r, head.Version+1)
	}
	if n := countVersions(t, dir, "v"); n != before+1 {
		t.Fatalf("%d versions made, want 1", n-before)
	}
	if v.speculated != published+1 {
		t.Fatalf("%d speculations published, want the second one only", v.speculated-published)
	}
	if wm := watermarkOf(mustLatest(t, v).Schema.Metadata); wm.SourceVersion != r.SourceVersion {
		t.Fatalf("watermark %d, want %d", wm.SourceVersion, r.SourceVersion)
	}
	checkView(t, db, "v")
	noStagingLeft(t, db, dir, "v")
}

// mustCurrent is v.current.
func mustCurrent(t *testing.T, v *View) (*lance.Snapshot, *plan.Definition) {
	t.Helper()
	vm, def, err := v.current(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return vm, def
}

// armed passes the injection points to inner only while on: the
// operations of one refresh, not of the ones that set it up.
type armed struct {
	on    atomic.Bool
	inner errorfs.Injector
}

func (a *armed) MaybeInject(p errorfs.Point) error {
	if !a.on.Load() {
		return nil
	}
	return a.inner.MaybeInject(p)
}

// TestSpeculationCrash injects a failure at every write, sync, link and
// rename of a refresh that speculates, and at the sync of its version's
// name after it returned (DeferSync): the view stays at its version with
// its watermark (or has the whole refresh), and the next refresh is right.
func TestSpeculationCrash(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	newGoSource(t, vfs.OS(), base, "src", 100)
	closeDB := func(db *DB) {
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	{
		db := openDB(t, base)
		v := must[*View](t)(db.CreateView(ctx, "v", "src", Definition{Where: "amount >= 90"}))
		must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
		closeDB(db)
	}
	// speculating opens the copy in dir through inj and makes its next
	// refresh one that speculates: a watermark-only refresh first, then a
	// source change the view does not take.
	speculating := func(dir string, inj errorfs.Injector) (*DB, *View) {
		db := openDBWith(t, dir, Options{FS: errorfs.Wrap(vfs.OS(), inj)})
		v := must[*View](t)(db.OpenView(ctx, "v"))
		s := &goSource{t: must[*lance.Table](t)(lance.Open(ctx, vfs.OS(), filepath.Join(dir, "src"+lance.TableSuffix))), dir: dir, name: "src"}
		s.deleteWhere(t, func(id int64) bool { return id != 1 })
		must[*Result](t)(v.Refresh(ctx, RefreshOptions{})) // learns: watermark only
		s.deleteWhere(t, func(id int64) bool { return id != 2 })
		return db, v
	}
	// How many injection points a speculating refresh has.
	probe := t.TempDir()
	copyDir(t, base, probe)
	counter := errorfs.NewCounter(errorfs.OpAll)
	inj := &armed{inner: counter}
	db, v := speculating(probe, inj)
	inj.on.Store(true)
	must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	if err := v.Table().WaitDurable(); err != nil { // its name's sync (DeferSync) counts
		t.Fatal(err)
	}
	inj.on.Store(false)
	if v.speculated != 1 {
		t.Fatal("the counted refresh did not speculate")
	}
	closeDB(db)
	points := counter.Count()
	t.Logf("%d injection points", points)
	if points < 3 {
		t.Fatalf("only %d injection points", points)
	}
	for n := 1; n <= points; n++ {
		dir := t.TempDir()
		copyDir(t, base, dir)
		inj := &armed{inner: errorfs.FailNth(n, errorfs.OpAll)}
		db, v := speculating(dir, inj)
		before := mustLatest(t, v)
		inj.on.Store(true)
		_, err := v.Refresh(ctx, RefreshOptions{})
		if err == nil {
			// The failure may come after the refresh returned: in the
			// sync of its version's name (DeferSync), which the close
			// then reports.
			err = v.Table().WaitDurable()
		}
		inj.on.Store(false)
		if err != nil && !errors.Is(err, errorfs.ErrInjected) && !errors.Is(err, lance.ErrCommitUncertain) {
			t.Fatalf("failure %d: %v", n, err)
		}
		if cerr := db.Close(); cerr != nil && (err == nil || !errors.Is(cerr, errorfs.ErrInjected)) {
			t.Fatalf("failure %d: close: %v", n, cerr)
		}
		checkFailedRefresh(t, dir, before, fmt.Sprintf("failure %d", n))
	}
}

// TestHandoff: wait returns what give handed over, whether give came
// first, during the polling, or after it (a zero spin blocks at once).
func TestHandoff(t *testing.T) {
	spec, head := &speculation{}, &lance.Head{Version: 7}
	for _, c := range []struct {
		name      string
		spin      time.Duration
		giveFirst bool
	}{{"given first", time.Second, true}, {"while polling", time.Minute, false}, {"blocked", 0, false}, {"nils", time.Second, true}} {
		h := newHandoff(c.spin)
		want, wantHead := spec, head
		if c.name == "nils" {
			want, wantHead = nil, nil
		}
		got := make(chan *speculation, 1)
		gotHead := make(chan *lance.Head, 1)
		if c.giveFirst {
			h.give(want, wantHead)
		}
		go func() {
			s, hd, woke := h.wait()
			if c.giveFirst && woke != 0 {
				t.Errorf("%s: a wait that did not block measured a wake-up of %v", c.name, woke)
			}
			got <- s
			gotHead <- hd
		}()
		if !c.giveFirst {
			h.give(want, wantHead)
		}
		if s, hd := <-got, <-gotHead; s != want || hd != wantHead {
			t.Errorf("%s: wait returned %p %v, want %p %v", c.name, s, hd, want, wantHead)
		}
	}
}

// TestWakeup: the handoff's spin follows the measured wake-ups (a mean
// weighted 1/4 to the latest), starts at 0 (block, and measure), ignores
// waits that did not block, and is bounded by maxHandoffSpin.
func TestWakeup(t *testing.T) {
	var w wakeup
	if w.spin() != 0 {
		t.Fatalf("spin before any measurement: %v, want 0", w.spin())
	}
	w.note(0)
	if w.spin() != 0 {
		t.Fatalf("a wait that did not block moved the spin to %v", w.spin())
	}
	w.note(200 * time.Microsecond)
	if w.spin() != 200*time.Microsecond {
		t.Fatalf("first measurement: spin %v, want 200µs", w.spin())
	}
	w.note(600 * time.Microsecond)
	if w.spin() != 300*time.Microsecond {
		t.Fatalf("after 200µs and 600µs: spin %v, want 300µs", w.spin())
	}
	for range 100 {
		w.note(time.Second)
	}
	if s := w.spin(); s > maxHandoffSpin || s < maxHandoffSpin*99/100 {
		t.Fatalf("after slow wake-ups: spin %v, want about the bound %v", s, maxHandoffSpin)
	}
}

// TestRefreshPastGap: a refresh whose source handle last saw a version
// after which a cleanup removed some (the probe for the head stops at the
// gap) does not reflect that head: the check for a newer version, put off
// until the rows are known, refuses it, the staged speculation is
// dropped, and the refresh starts over from the latest version. The
// versions in the gap are gone, so it rebuilds.
func TestRefreshPastGap(t *testing.T) {
	ctx := context.Background()
	dir, src, db, v := selectiveView(t)
	must[*Result](t)(v.Refresh(ctx, RefreshOptions{})) // the rebuild
	for _, id := range []int64{10, 11} {               // not in the view: watermark-only refreshes
		src.deleteWhere(t, func(i int64) bool { return i != id })
		must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	}
	if !v.speculates() {
		t.Fatal("the view does not speculate after two watermark-only refreshes")
	}
	wm := watermarkOf(mustLatest(t, v).Schema.Metadata).SourceVersion
	// wm+1 stays; wm+2 and wm+3 go; wm+4, which adds a row the view
	// takes, is the latest.
	for _, id := range []int64{12, 13, 14} {
		src.deleteWhere(t, func(i int64) bool { return i != id })
	}
	src.append(t, 290, 291) // amount 90: in the view
	latest := wm + 4
	for _, r := range must[[]lance.VersionRef](t)(src.t.Versions(ctx)) {
		if r.Version == wm+2 || r.Version == wm+3 {
			if err := os.Remove(filepath.Join(dir, "src"+lance.TableSuffix, "_versions", r.File)); err != nil {
				t.Fatal(err)
			}
		}
	}
	before, published := countVersions(t, dir, "v"), v.speculated
	r := must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	if r.SourceVersion != latest || r.Mode != ModeRebuild {
		t.Fatalf("refresh past a gap: %+v; want a rebuild to source version %d", r, latest)
	}
	if n := countVersions(t, dir, "v"); n != before+1 {
		t.Fatalf("refresh made %d versions, want 1", n-before)
	}
	if v.speculated != published {
		t.Fatal("the speculation staged on the head before the gap was published")
	}
	checkView(t, db, "v")
	noStagingLeft(t, db, dir, "v")
}
