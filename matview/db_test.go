package matview

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// TestListReportsABadViewAlone: a hand-edited, corrupt or unknown-kind
// mv.definition is reported for that view; the listing still works and
// refreshing the bad view fails with one clear line.
func TestListReportsABadViewAlone(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	newGoSource(t, vfs.OS(), dir, "src", 10)
	db := openDB(t, dir)
	for _, n := range []string{"good", "corrupt", "join"} {
		must[*View](t)(db.CreateView(ctx, n, "src", Definition{}))
	}
	for name, def := range map[string]string{"corrupt": `{"kind":"select",`, "join": `{"kind":"join"}`} {
		tbl := must[*lance.Table](t)(lance.Open(ctx, vfs.OS(), db.root(name)))
		must[*lance.Snapshot](t)(tbl.Commit(ctx, must[*lance.Snapshot](t)(tbl.Latest(ctx)), &lance.Commit{SchemaMetadata: map[string]string{KeyDefinition: def}}))
	}
	list := must[[]ViewEntry](t)(db.ListViews(context.Background()))
	if len(list) != 3 {
		t.Fatalf("listed %d views: %+v", len(list), list)
	}
	for _, e := range list {
		switch e.Name {
		case "good":
			if e.Err != nil || e.Definition == nil {
				t.Fatalf("good: %v", e.Err)
			}
		case "corrupt":
			if !errors.Is(e.Err, ErrInvalid) || !strings.Contains(e.Err.Error(), "view 'corrupt': unreadable materialized view definition") {
				t.Fatalf("corrupt: %v", e.Err)
			}
		case "join":
			if !errors.Is(e.Err, ErrUnsupported) || e.Err.Error() != "materialized view 'join' is defined by 'join', which this version of mvd cannot refresh" {
				t.Fatalf("join: %v", e.Err)
			}
		}
	}
	if _, err := db.OpenView(context.Background(), "corrupt"); err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("open corrupt: %v", err)
	}
	// Drop: a plain table is refused, a view goes, a second drop is not found.
	if err := db.DropView(context.Background(), "src"); !errors.Is(err, ErrNotAView) {
		t.Fatalf("drop a table: %v", err)
	}
	if err := db.DropView(context.Background(), "good"); err != nil {
		t.Fatal(err)
	}
	if err := db.DropView(context.Background(), "good"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("drop twice: %v", err)
	}
	if _, err := db.Exec(ctx, "DROP MATERIALIZED VIEW IF EXISTS good"); err != nil {
		t.Fatalf("drop if exists: %v", err)
	}
	// Create, refresh and show through SQL.
	res := must[*StatementResult](t)(db.Exec(ctx, "CREATE MATERIALIZED VIEW good AS SELECT id, amount * 2 AS dbl FROM src WHERE amount > 3 LIMIT 4;"))
	if res.Created == nil || res.Created.Definition.Filter != "amount > 3" || *res.Created.Definition.Limit != 4 {
		t.Fatalf("create: %+v", res.Created)
	}
	res = must[*StatementResult](t)(db.Exec(ctx, "REFRESH MATERIALIZED VIEW good WITH (full = true)"))
	if res.Refreshed.Mode != ModeRebuild || res.Refreshed.RowsWritten != 4 {
		t.Fatalf("refresh: %+v", res.Refreshed)
	}
	if _, err := db.Exec(ctx, "REFRESH MATERIALIZED VIEW good WITH (cpu_millis = 5)"); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("budget: %v", err)
	}
	// What package control runs is refused here, never ignored.
	for _, stmt := range []string{"CREATE MATERIALIZED VIEW IF NOT EXISTS good AS SELECT id FROM src", "CREATE MATERIALIZED VIEW g2 WITH (debounce_ms = 1) AS SELECT id FROM src",
		"REFRESH MATERIALIZED VIEW good WITH (async = true)", "ALTER MATERIALIZED VIEW good SET (debounce_ms = 1)", "DESCRIBE MATERIALIZED VIEW good", "SHOW JOBS"} {
		if _, err := db.Exec(ctx, stmt); !errors.Is(err, ErrUnsupported) {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	checkView(t, db, "good")
	// A stale handle after drop and recreate refuses to refresh.
	old := must[*View](t)(db.OpenView(context.Background(), "good"))
	db2 := openDB(t, dir)
	if err := db2.DropView(context.Background(), "good"); err != nil {
		t.Fatal(err)
	}
	must[*View](t)(db2.CreateView(ctx, "good", "src", Definition{}))
	if _, err := old.Refresh(ctx, RefreshOptions{}); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "dropped and recreated") {
		t.Fatalf("stale handle: %v", err)
	}
	// Through SQL, the open handle is replaced by one of the view as it is
	// now: the recreated view (unlimited) is rebuilt with every row.
	res = must[*StatementResult](t)(db.Exec(ctx, "REFRESH MATERIALIZED VIEW good"))
	if res.Refreshed.Mode != ModeRebuild || res.Refreshed.RowsWritten != uint64(must[*lance.Snapshot](t)(must[*lance.Table](t)(lance.Open(ctx, vfs.OS(), db.root("src"))).Latest(ctx)).LiveRows()) {
		t.Fatalf("refresh of the recreated view through SQL: %+v", res.Refreshed)
	}
	checkView(t, db, "good")
	// Dropped by another handle: not found, as an unknown view is.
	if err := db2.DropView(context.Background(), "good"); err != nil {
		t.Fatal(err)
	}
	_, err := db.Exec(ctx, "REFRESH MATERIALIZED VIEW good")
	_, unknown := db.Exec(ctx, "REFRESH MATERIALIZED VIEW never_was")
	if !errors.Is(err, ErrNotFound) || !errors.Is(unknown, ErrNotFound) || strings.Replace(err.Error(), "good", "never_was", -1) != unknown.Error() {
		t.Fatalf("refresh of a dropped view through SQL: %v (an unknown view: %v)", err, unknown)
	}
}

// TestListAndDropUnreadableView: a view whose newest manifest is damaged
// is listed with its error (not left out), and DropView removes it; a
// damaged plain table stays out of the listing and is not dropped.
func TestListAndDropUnreadableView(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	newGoSource(t, vfs.OS(), dir, "src", 10)
	db := openDB(t, dir)
	for _, n := range []string{"good", "broken", "fresh"} {
		must[*View](t)(db.CreateView(ctx, n, "src", Definition{}))
	}
	must[*Result](t)(must[*View](t)(db.OpenView(ctx, "broken")).Refresh(ctx, RefreshOptions{}))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	newGoSource(t, vfs.OS(), dir, "plain", 3)
	for _, n := range []string{"broken", "plain"} {
		damageNewestManifest(t, db.root(n), false)
	}
	// The one version of a view never refreshed: cut off its end.
	damageNewestManifest(t, db.root("fresh"), true)
	db = openDB(t, dir)
	list := must[[]ViewEntry](t)(db.ListViews(ctx))
	got := map[string]error{}
	for _, e := range list {
		got[e.Name] = e.Err
	}
	if len(list) != 3 || got["good"] != nil || got["broken"] == nil || got["fresh"] == nil {
		t.Fatalf("listed %+v, want good, and broken and fresh with their errors", list)
	}
	if _, ok := got["plain"]; ok {
		t.Fatalf("a damaged plain table is listed as a view: %v", got["plain"])
	}
	if !errors.Is(got["broken"], ErrInvalid) || !strings.Contains(got["broken"].Error(), "view 'broken' cannot be read") {
		t.Fatalf("broken: %v", got["broken"])
	}
	for _, n := range []string{"broken", "fresh"} {
		if err := db.DropView(ctx, n); err != nil {
			t.Fatalf("drop %s: %v", n, err)
		}
		if db.exists(n) {
			t.Fatalf("%s still exists after drop", n)
		}
	}
	if err := db.DropView(ctx, "plain"); err == nil || !db.exists("plain") {
		t.Fatalf("drop of a damaged plain table: %v", err)
	}
	if list := must[[]ViewEntry](t)(db.ListViews(ctx)); len(list) != 1 || list[0].Name != "good" {
		t.Fatalf("after drop: %+v", list)
	}
}

// damageNewestManifest overwrites the newest manifest of the table at
// root with garbage of the same size, or cuts off its last 64 bytes.
func damageNewestManifest(t *testing.T, root string, truncate bool) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(root, "_versions"))
	if err != nil {
		t.Fatal(err)
	}
	var newest string
	var newestVer uint64
	tbl := must[*lance.Table](t)(lance.Open(context.Background(), vfs.OS(), root))
	for _, r := range must[[]lance.VersionRef](t)(tbl.Versions(context.Background())) {
		if r.Version >= newestVer {
			newest, newestVer = r.File, r.Version
		}
	}
	if newest == "" || len(ents) == 0 {
		t.Fatalf("no manifest in %s", root)
	}
	p := filepath.Join(root, "_versions", newest)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if truncate {
		b = b[:len(b)-64]
	} else {
		for i := range b {
			b[i] ^= 0x5a
		}
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
