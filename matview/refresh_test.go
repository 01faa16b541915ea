package matview

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/vfs"
)

func u64(n uint64) *uint64 { return &n }

func mustRefresh(t *testing.T, db *DB, name string, o RefreshOptions, mode Mode, rows uint64) *Result {
	t.Helper()
	v, err := db.OpenView(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := v.Refresh(context.Background(), o)
	if err != nil {
		t.Fatalf("refresh %s: %v", name, err)
	}
	if r.Mode != mode || (rows != ^uint64(0) && r.RowsWritten != rows) {
		t.Fatalf("refresh %s: %+v, want mode %s rows %d", name, r, mode, rows)
	}
	checkView(t, db, name)
	return r
}

func TestRefreshGoSource(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := newGoSource(t, vfs.OS(), dir, "src", 100)
	db := openDB(t, dir)
	sel, err := plan.ParseSelect("id, upper(name) AS shout, amount * 100 AS cents")
	if err != nil {
		t.Fatal(err)
	}
	shapes := map[string]Definition{
		"ident":    {},
		"filtered": {Select: sel, Where: "amount > 50"},
		"limited":  {Where: "amount >= 10", Limit: u64(7)},
	}
	for name, d := range shapes {
		if _, err := db.CreateView(ctx, name, "src", d); err != nil {
			t.Fatal(err)
		}
	}
	any := ^uint64(0)
	for name := range shapes {
		r := mustRefresh(t, db, name, RefreshOptions{}, ModeRebuild, any)
		if r.Version != 2 {
			t.Fatalf("%s: version %d after first refresh, want 2", name, r.Version)
		}
		mustRefresh(t, db, name, RefreshOptions{}, ModeNoOp, 0)
	}
	src.append(t, 100, 150)
	mustRefresh(t, db, "ident", RefreshOptions{}, ModeIncremental, 50)
	mustRefresh(t, db, "filtered", RefreshOptions{}, ModeIncremental, any)
	mustRefresh(t, db, "limited", RefreshOptions{}, ModeIncremental, 0)
	src.deleteWhere(t, func(id int64) bool { return id%3 != 0 })
	for name := range shapes {
		mustRefresh(t, db, name, RefreshOptions{}, ModeIncremental, any)
	}
	src.deleteWhere(t, func(id int64) bool { return id >= 120 })
	for name := range shapes {
		mustRefresh(t, db, name, RefreshOptions{}, ModeIncremental, any)
		mustRefresh(t, db, name, RefreshOptions{Full: true}, ModeRebuild, any)
	}
	// Pin an older version: rebuild back in time, then catch up.
	mustRefresh(t, db, "filtered", RefreshOptions{SourceVersion: u64(2)}, ModeRebuild, any)
	mustRefresh(t, db, "filtered", RefreshOptions{}, ModeIncremental, any)
	// A fresh DB (cold process) refreshes incrementally from the saved index.
	src.append(t, 150, 160)
	db2 := openDB(t, dir)
	for name := range shapes {
		mustRefresh(t, db2, name, RefreshOptions{}, ModeIncremental, any)
	}
}

// TestRefreshWithPrecomputedChanges: a change set handed in by the caller
// (the daemon's watcher) is used when it spans the watermark to the target,
// and gives the same view as one computed by the refresh.
func TestRefreshWithPrecomputedChanges(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := newGoSource(t, vfs.OS(), dir, "src", 50)
	db := openDB(t, dir)
	v := must[*View](t)(db.CreateView(ctx, "v", "src", Definition{Where: "amount > 10"}))
	r := must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	src.append(t, 50, 80)
	src.deleteWhere(t, func(id int64) bool { return id%5 != 0 })
	cs := must[*lance.ChangeSet](t)(src.t.Changes(ctx, r.SourceVersion, r.SourceVersion+2))
	r = must[*Result](t)(v.Refresh(ctx, RefreshOptions{Changes: cs}))
	if r.Mode != ModeIncremental || r.SourceVersion != cs.To {
		t.Fatalf("%+v", r)
	}
	checkView(t, db, "v")
	// A change set that does not match the span is ignored, not trusted.
	src.append(t, 80, 90)
	r = must[*Result](t)(v.Refresh(ctx, RefreshOptions{Changes: cs}))
	if r.Mode != ModeIncremental {
		t.Fatalf("%+v", r)
	}
	checkView(t, db, "v")
}

// TestEditedDefinitionRebuilds: a definition replaced in the view's
// metadata (by hand, by another tool) wins, and the rows computed by the
// old one are not kept: the next refresh rebuilds.
func TestEditedDefinitionRebuilds(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	newGoSource(t, vfs.OS(), dir, "src", 30)
	db := openDB(t, dir)
	v := must[*View](t)(db.CreateView(ctx, "v", "src", Definition{Where: "amount > 10"}))
	must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	d := must[*plan.Definition](t)(v.Definition())
	d.Filter = "amount > 20"
	raw := must[string](t)(d.Encode())
	vm := mustLatest(t, v)
	must[*lance.Snapshot](t)(v.Table().Commit(ctx, vm, &lance.Commit{SchemaMetadata: map[string]string{KeyDefinition: raw}}))
	r := must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	if r.Mode != ModeRebuild {
		t.Fatalf("%+v", r)
	}
	checkView(t, db, "v")
}

// TestBitmapOf checks the run-aware set builder against a plain one.
func TestBitmapOf(t *testing.T) {
	var ids []uint64
	for i := uint64(0); i < 100; i++ {
		ids = append(ids, 1000+i) // a run
	}
	ids = append(ids, 5, 7, 7, 8, 9, 1<<40, 1<<40+1, 3)
	for i := uint64(0); i < 20; i++ {
		ids = append(ids, 1<<33+i)
	}
	got, want := bitmapOf(ids), roaring64.BitmapOf(ids...)
	if !got.Equals(want) {
		t.Fatalf("bitmapOf = %v, want %v", got.ToArray(), want.ToArray())
	}
	if !bitmapOf(nil).IsEmpty() {
		t.Fatal("bitmapOf(nil) is not empty")
	}
}

// TestWarmViewSeesOtherWriters: a view handle kept warm (plan, provenance
// index, source table handle) by one DB while another DB — another process
// — refreshes the same view and the source moves on must catch up from the
// files, never from what it remembers: no row twice, none lost.
func TestWarmViewSeesOtherWriters(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := newGoSource(t, vfs.OS(), dir, "src", 100)
	a, b := openDB(t, dir), openDB(t, dir)
	if _, err := a.CreateView(ctx, "v", "src", Definition{Where: "amount > 20"}); err != nil {
		t.Fatal(err)
	}
	any := ^uint64(0)
	mustRefresh(t, a, "v", RefreshOptions{}, ModeRebuild, any)
	src.append(t, 100, 200)
	mustRefresh(t, a, "v", RefreshOptions{}, ModeIncremental, any) // a is warm
	src.append(t, 200, 300)
	mustRefresh(t, b, "v", RefreshOptions{}, ModeIncremental, any) // behind a's back
	src.append(t, 300, 400)
	src.deleteWhere(t, func(id int64) bool { return id%7 != 0 })
	mustRefresh(t, a, "v", RefreshOptions{}, ModeIncremental, any)
	src.append(t, 400, 450)
	mustRefresh(t, b, "v", RefreshOptions{}, ModeIncremental, any)
	mustRefresh(t, a, "v", RefreshOptions{}, ModeNoOp, 0)
}

// TestResultAppendJSON: a result's JSON line is encoding/json's, for
// every mode and for a mode that would need escaping.
func TestResultAppendJSON(t *testing.T) {
	for _, r := range []Result{
		{Mode: ModeIncremental, RowsWritten: 3, SourceVersion: 7, Version: 5},
		{Mode: ModeRebuild, RowsWritten: 1 << 62, SourceVersion: 1, Version: 2, Reason: "first refresh"},
		{Mode: ModeNoOp},
		{Mode: `odd "mode" <&>` + "\n"},
	} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&r); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(buf.String(), "\n")
		if got := string(r.AppendJSON([]byte("x"))); got != "x"+want {
			t.Errorf("AppendJSON %s, encoding/json x%s", got, want)
		}
	}
}
