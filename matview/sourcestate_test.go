package matview

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/internal/lancedbtest"
)

// TestRefreshAfterWatermarkCleanedUp: LanceDB writes a source and mvd,
// with a real checkpoint store as its SourceStateStore, refreshes a view
// over it. LanceDB then appends, updates and deletes, and its optimize
// compacts the source and cleans the watermark's version up: the next
// refresh is incremental, from the state kept of that version, and the
// view holds what a rebuild of the same definition holds. Then each way
// the kept state cannot stand in makes the refresh rebuild and say why: a
// damaged state, no state, a source dropped and recreated. Without a
// store the refresh rebuilds as before.
func TestRefreshAfterWatermarkCleanedUp(t *testing.T) {
	lancedbtest.Require(t)
	ctx := context.Background()
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	store, err := checkpoint.Open(filepath.Join(t.TempDir(), "state"), checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	db := openDBWith(t, dir, Options{SourceStates: store})
	mustV := must[uint64](t)
	mustV(d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 40, 0)))
	mustV(d.Delete("src", "id = 1"))
	def := Definition{Where: "score > 200"}
	for _, name := range []string{"v", "rebuilt"} {
		if _, err := db.CreateView(ctx, name, "src", def); err != nil {
			t.Fatal(err)
		}
	}
	v := must[*View](t)(db.OpenView(ctx, "v"))
	rebuilt := must[*View](t)(db.OpenView(ctx, "rebuilt"))
	refresh := func(want Mode, reason string) *Result {
		t.Helper()
		res, err := v.Refresh(ctx, RefreshOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Mode != want || !strings.Contains(res.Reason, reason) {
			t.Fatalf("refresh: %s (%q), want %s (%q)", res.Mode, res.Reason, want, reason)
		}
		store.FlushSourceStates()
		checkView(t, db, "v")
		return res
	}
	// cleanedUp has LanceDB change the source and clean the watermark's
	// version up.
	step := int64(0)
	cleanedUp := func() {
		t.Helper()
		step++
		base := 40 + 10*step
		mustV(d.Add("src", lancedbtest.SourceRows(base, base+6, 0)))
		if _, err := d.Update("src", "id IN (3, 4, "+strconv.FormatInt(base, 10)+")", map[string]string{"score": "score + 300"}); err != nil {
			t.Fatal(err)
		}
		mustV(d.Delete("src", "id IN (5, 6, "+strconv.FormatInt(base+1, 10)+")"))
		mustV(d.OptimizeCleanup("src", 0))
		wm := must[Watermark](t)(db.Watermark(ctx, "v"))
		src, err := db.openTable(ctx, "src")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := src.Checkout(ctx, wm.SourceVersion); err == nil {
			t.Fatalf("the watermark's version %d was not cleaned up", wm.SourceVersion)
		}
	}

	refresh(ModeRebuild, "first refresh")
	cleanedUp()
	res := refresh(ModeIncremental, "")
	if _, err := rebuilt.Refresh(ctx, RefreshOptions{SourceVersion: &res.SourceVersion}); err != nil {
		t.Fatal(err)
	}
	if got, want := rowsOf(t, mustLatest(t, v)), rowsOf(t, mustLatest(t, rebuilt)); !slices.Equal(got, want) {
		t.Fatalf("incremental refresh from the kept state:\n got %q\nwant %q (a rebuild's)", got, want)
	}

	// A damaged state: the refresh rebuilds, and keeps a good one again.
	wm := must[Watermark](t)(db.Watermark(ctx, "v"))
	good := must[[]byte](t)(store.LoadSourceState(ctx, "v"))
	bad := slices.Clone(good)
	bad[len(bad)/2] ^= 1
	store.KeepSourceState("v", wm.SourceVersion, wm.SourceVersionTS+1, func() ([]byte, error) { return bad, nil })
	store.FlushSourceStates()
	cleanedUp()
	refresh(ModeRebuild, "was cleaned up and the state kept of it is damaged")
	cleanedUp()
	refresh(ModeIncremental, "")

	// No state.
	if err := store.DeleteView(ctx, "v"); err != nil {
		t.Fatal(err)
	}
	cleanedUp()
	refresh(ModeRebuild, "was cleaned up and no state of it was kept")

	// The source dropped and recreated, past the watermark's version,
	// which is cleaned up.
	wm = must[Watermark](t)(db.Watermark(ctx, "v"))
	if err := d.DropTable("src"); err != nil {
		t.Fatal(err)
	}
	mustV(d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 40, 5)))
	for n := mustV(d.Delete("src", "id = 1")); n <= wm.SourceVersion+1; {
		n = mustV(d.Add("src", lancedbtest.SourceRows(int64(100+n), int64(101+n), 5)))
	}
	mustV(d.OptimizeCleanup("src", 0))
	refresh(ModeRebuild, "the state kept of it cannot stand in for it")

	// Without a store, as before.
	cleanedUp()
	plain := openDB(t, dir)
	res, err = must[*View](t)(plain.OpenView(ctx, "v")).Refresh(ctx, RefreshOptions{})
	if err != nil || res.Mode != ModeRebuild || !strings.Contains(res.Reason, "no state of it was kept (no state store)") {
		t.Fatalf("refresh without a store: %+v, %v", res, err)
	}
}
