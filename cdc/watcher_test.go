package cdc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// TestWatcherEveryVersionOnce: commits made while the watcher runs are
// each reported once, in order, with their change sets, with fsnotify and
// with polling alone.
func TestWatcherEveryVersionOnce(t *testing.T) {
	for _, mode := range []Mode{ModeNotify, ModePoll} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := t.TempDir()
			root := createTable(t, dir, "src", 10, false)
			createTable(t, dir, "other", 3, false)
			opts := Options{Dir: dir, Mode: mode}
			if mode == ModeNotify {
				// The fallback would find everything too; make it too
				// slow to matter, so this tests the events.
				opts.PollInterval, opts.ListInterval = 1<<40, 1<<40
			}
			c := startWatcher(t, opts)
			c.waitFor("synced", hasEvent(KindSynced, "", 0))
			c.waitFor("src added", hasEvent(KindAdded, "src", 1))
			// Watching starts after the first look, as the daemon does.
			c.w.Watch("src", 1)
			var last uint64
			for i := int64(0); i < 40; i++ {
				if i%5 == 4 {
					last = deleteRowIDs(t, root, uint64(i))
				} else {
					last = appendRows(t, root, 100+i, 101+i)
				}
			}
			evs := c.waitFor("last version", hasEvent(KindVersion, "src", last))
			vs := ofTable(evs, "src", KindVersion)
			checkContiguous(t, vs, 1, last)
			for i, ev := range vs {
				ins, del := ev.Changes.Inserted.GetCardinality(), ev.Changes.Deleted.GetCardinality()
				if i%5 == 4 {
					if ins != 0 || del != 1 || ev.Operation != "delete" {
						t.Errorf("%v: inserted %d deleted %d op %q, want a delete of 1", ev, ins, del, ev.Operation)
					}
				} else if ins != 1 || del != 0 || ev.Operation != "append" {
					t.Errorf("%v: inserted %d deleted %d op %q, want an append of 1", ev, ins, del, ev.Operation)
				}
			}
			if got := ofTable(evs, "other", KindVersion); len(got) != 0 {
				t.Errorf("unwatched table reported versions: %v", got)
			}
			if got := ofTable(evs, "other", KindAdded); len(got) != 1 {
				t.Errorf("other: %d added events, want 1", len(got))
			}
		})
	}
}

// TestWatcherBurst: a thousand commits as fast as the writer can make
// them are all reported, each once, in order.
func TestWatcherBurst(t *testing.T) {
	n := 1000
	switch {
	case testing.Short():
		n = 100
	case raceEnabled:
		n = 300 // the same logic; the detector makes each commit ~5x slower
	}
	dir := t.TempDir()
	root := createTable(t, dir, "src", 1, false)
	c := startWatcher(t, Options{Dir: dir})
	c.w.Watch("src", 0)
	c.waitFor("src added", hasEvent(KindAdded, "src", 1))
	var last uint64
	start := time.Now()
	for i := 0; i < n; i++ {
		last = appendRows(t, root, int64(i), int64(i)+1)
	}
	committed := time.Now()
	evs := c.waitFor("last version", hasEvent(KindVersion, "src", last))
	t.Logf("%d commits in %v; last one reported %v later", n, committed.Sub(start).Round(time.Millisecond), time.Since(committed).Round(time.Millisecond))
	checkContiguous(t, ofTable(evs, "src", KindVersion), 1, last)
}

// TestWatcherTablesComeAndGo: a watched table dropped mid-watch is
// reported dropped; created again, it is a new incarnation whose versions
// are reported; tables created later are found.
func TestWatcherTablesComeAndGo(t *testing.T) {
	for _, mode := range []Mode{ModeNotify, ModePoll} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := t.TempDir()
			root := createTable(t, dir, "src", 5, false)
			opts := Options{Dir: dir, Mode: mode}
			if mode == ModeNotify {
				opts.PollInterval, opts.ListInterval = 1<<40, 1<<40 // events only
			}
			c := startWatcher(t, opts)
			c.w.Watch("src", 0)
			c.w.Watch("later", 0)
			evs := c.waitFor("src added", hasEvent(KindAdded, "src", 1))
			inc1 := ofTable(evs, "src", KindAdded)[0].Incarnation
			v := appendRows(t, root, 5, 6)
			c.waitFor("src v2", hasEvent(KindVersion, "src", v))
			if err := os.RemoveAll(root); err != nil {
				t.Fatal(err)
			}
			c.waitFor("src dropped", hasEvent(KindDropped, "src", 0))
			createTable(t, dir, "src", 7, false)
			v = appendRows(t, root, 7, 9)
			evs = c.waitFor("src again at v2", func(evs []Event) bool {
				for _, ev := range evs {
					if ev.Kind == KindVersion && ev.Table == "src" && ev.To == v && ev.Incarnation != inc1 {
						return true
					}
				}
				// The watcher may first see the new table at v2 already.
				for _, ev := range evs {
					if ev.Kind == KindAdded && ev.Table == "src" && ev.To == v && ev.Incarnation != inc1 {
						return true
					}
				}
				return false
			})
			added := ofTable(evs, "src", KindAdded)
			if len(added) != 2 || added[1].Incarnation == inc1 {
				t.Fatalf("added events %v: want a second one with a new incarnation", added)
			}
			lroot := createTable(t, dir, "later", 2, false)
			lv := appendRows(t, lroot, 2, 3)
			c.waitFor("later v2", func(evs []Event) bool {
				return hasEvent(KindVersion, "later", lv)(evs) || hasEvent(KindAdded, "later", lv)(evs)
			})
		})
	}
}

// TestRecreatedBetweenLooks: a table dropped and created again between two
// looks is reported as recreated, and its new versions follow.
func TestRecreatedBetweenLooks(t *testing.T) {
	dir := t.TempDir()
	root := createTable(t, dir, "src", 5, false)
	appendRows(t, root, 5, 6)
	w := syncWatcher(t, dir)
	w.Watch("src", 0)
	evs := w.scanNow(t, false)
	if len(evs) != 1 || evs[0].Kind != KindAdded || evs[0].To != 2 {
		t.Fatalf("first look: %v", evs)
	}
	inc := evs[0].Incarnation
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	createTable(t, dir, "src", 3, false)
	v3 := appendRows(t, root, 3, 4)
	appendRows(t, root, 4, 5) // version 3, past the old latest
	_ = v3
	evs = w.scanNow(t, false)
	if len(evs) != 1 || evs[0].Kind != KindRecreated || evs[0].To != 3 || evs[0].Incarnation == inc {
		t.Fatalf("after recreation: %v", evs)
	}
	v := appendRows(t, root, 5, 6)
	evs = w.scanNow(t, false)
	if len(evs) != 1 || evs[0].Kind != KindVersion || evs[0].From != 3 || evs[0].To != v {
		t.Fatalf("after a commit: %v", evs)
	}
}

// TestWatchNow: WatchNow takes the latest version when it is called, so a
// commit landing before the watcher applies the request is still reported
// (Watch(table, 0) would start after it). On a watched table it keeps the
// position.
func TestWatchNow(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	root := createTable(t, dir, "src", 5, false)
	w := syncWatcher(t, dir)
	if err := w.WatchNow(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	v2 := appendRows(t, root, 5, 6) // after WatchNow, before the look
	evs := w.scanNow(t, false)
	if len(evs) != 2 || evs[0].Kind != KindAdded || evs[0].To != 1 {
		t.Fatalf("events %v", evs)
	}
	checkContiguous(t, evs[1:], 1, v2)
	v3 := appendRows(t, root, 6, 7)
	if err := w.WatchNow(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	evs = w.scanNow(t, false)
	checkContiguous(t, evs, v2, v3)
	// A table that does not exist yet is watched from its first version.
	if err := w.WatchNow(ctx, "later"); err != nil {
		t.Fatalf("WatchNow of a missing table: %v", err)
	}
}

// TestWatchFrom: a watch from an older version reports the backlog step by
// step; from a version the table does not have yet (another incarnation)
// reports a recreation.
func TestWatchFrom(t *testing.T) {
	dir := t.TempDir()
	root := createTable(t, dir, "src", 5, false)
	for i := int64(0); i < 4; i++ {
		appendRows(t, root, 10+i, 11+i)
	}
	w := syncWatcher(t, dir)
	w.Watch("src", 2)
	evs := w.scanNow(t, false)
	if len(evs) != 4 || evs[0].Kind != KindAdded || evs[0].To != 2 {
		t.Fatalf("events %v", evs)
	}
	checkContiguous(t, evs[1:], 2, 5)
	// Watching again from 0 keeps the position: nothing is skipped.
	v6 := appendRows(t, root, 20, 21)
	w.Watch("src", 0)
	evs = w.scanNow(t, false)
	checkContiguous(t, evs, 5, v6)
	w.Watch("src", 9)
	evs = w.scanNow(t, false)
	if len(evs) != 1 || evs[0].Kind != KindRecreated || evs[0].To != v6 {
		t.Fatalf("watch from a future version: %v", evs)
	}
	// From a version cleaned up: one step to the latest, without a
	// change set, then on as usual.
	src, err := w.openSource(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "_versions", manifestName(2, src.naming))); err != nil {
		t.Fatal(err)
	}
	w.Watch("src", 2)
	evs = w.scanNow(t, false)
	if len(evs) != 1 || evs[0].Kind != KindVersion || evs[0].From != 2 || evs[0].To != v6 || !errors.Is(evs[0].Err, ErrHistoryGone) {
		t.Fatalf("watch from a cleaned-up version: %v", evs)
	}
	v7 := appendRows(t, root, 21, 22)
	checkContiguous(t, w.scanNow(t, false), v6, v7)
}

// TestChangesNotComputable: a table without stable row ids gets version
// events carrying the error, and the other tables are unaffected.
func TestChangesNotComputable(t *testing.T) {
	dir := t.TempDir()
	plain := createTable(t, dir, "plain", 5, true)
	good := createTable(t, dir, "good", 5, false)
	w := syncWatcher(t, dir)
	w.Watch("plain", 0)
	w.Watch("good", 0)
	w.scanNow(t, false)
	appendRows(t, plain, 5, 6)
	appendRows(t, good, 5, 6)
	evs := w.scanNow(t, false)
	p, g := ofTable(evs, "plain", KindVersion), ofTable(evs, "good", KindVersion)
	if len(p) != 1 || !errors.Is(p[0].Err, lance.ErrNoStableRowIDs) || p[0].Changes != nil {
		t.Fatalf("plain: %v", p)
	}
	checkContiguous(t, g, 1, 2)
}

// TestCorruptAndCleanedVersions: an unreadable manifest is reported once
// and retried; a full look steps over it once a later version is readable,
// and over cleaned-up versions, computing the change set across them.
func TestCorruptAndCleanedVersions(t *testing.T) {
	dir := t.TempDir()
	root := createTable(t, dir, "src", 5, false)
	other := createTable(t, dir, "other", 5, false)
	w := syncWatcher(t, dir)
	w.Watch("src", 0)
	w.Watch("other", 0)
	w.scanNow(t, false)
	v2 := appendRows(t, root, 5, 6)
	v3 := appendRows(t, root, 6, 8)
	appendRows(t, other, 5, 6)
	src, err := w.openSource(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(root, "_versions", manifestName(v2, src.naming))
	if err := os.WriteFile(bad, []byte("not a manifest"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // reported once, not on every look
		evs := w.scanNow(t, false)
		errs := ofTable(evs, "src", KindError)
		if want := 1 - i; len(errs) != want || len(ofTable(evs, "src", KindVersion)) != 0 {
			t.Fatalf("look %d: %v", i, evs)
		}
		if i == 0 {
			if !errors.Is(errs[0].Err, lance.ErrCorrupt) || errs[0].To != v2 {
				t.Fatalf("error event %v", errs[0])
			}
			checkContiguous(t, ofTable(evs, "other", KindVersion), 1, 2)
		}
	}
	evs := w.scanNow(t, true)
	vs := ofTable(evs, "src", KindVersion)
	if len(vs) != 1 || vs[0].From != 1 || vs[0].To != v3 || vs[0].Err != nil || vs[0].Changes.Inserted.GetCardinality() != 3 {
		t.Fatalf("stepping over the corrupt version: %v", evs)
	}
	// Cleaned up: versions 4 and 5 committed, 4's manifest removed.
	v4 := appendRows(t, root, 8, 9)
	v5 := appendRows(t, root, 9, 10)
	if err := os.Remove(filepath.Join(root, "_versions", manifestName(v4, src.naming))); err != nil {
		t.Fatal(err)
	}
	if evs := w.scanNow(t, false); len(evs) != 0 {
		t.Fatalf("probe past a gap: %v", evs)
	}
	evs = w.scanNow(t, true)
	vs = ofTable(evs, "src", KindVersion)
	if len(vs) != 1 || vs[0].From != v3 || vs[0].To != v5 || vs[0].Err != nil || vs[0].Changes.Inserted.GetCardinality() != 2 {
		t.Fatalf("stepping over a cleaned-up version: %v", evs)
	}
}

// TestUnpublishedManifestsIgnored: files in _versions/ that are not
// published manifests (temporary files, staging names) are not versions.
func TestUnpublishedManifestsIgnored(t *testing.T) {
	dir := t.TempDir()
	root := createTable(t, dir, "src", 5, false)
	w := syncWatcher(t, dir)
	w.Watch("src", 0)
	w.scanNow(t, false)
	src, err := w.openSource(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".tmp_" + manifestName(2, src.naming), manifestName(2, src.naming) + "#1", "d2.manifest"} {
		if err := os.WriteFile(filepath.Join(root, "_versions", name), []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if evs := w.scanNow(t, true); len(evs) != 0 {
		t.Fatalf("unpublished files reported: %v", evs)
	}
	v := appendRows(t, root, 5, 6)
	evs := w.scanNow(t, false)
	checkContiguous(t, evs, 1, v)
}

// TestNotATableYet: a directory being created (no published manifest yet)
// is not a table until its first manifest appears.
func TestNotATableYet(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "new.lance", "_versions"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := syncWatcher(t, dir)
	if evs := w.scanNow(t, false); len(evs) != 0 {
		t.Fatalf("events %v", evs)
	}
	if err := os.RemoveAll(filepath.Join(dir, "new.lance")); err != nil {
		t.Fatal(err)
	}
	createTable(t, dir, "new", 1, false)
	evs := w.scanNow(t, false)
	if len(evs) != 1 || evs[0].Kind != KindAdded {
		t.Fatalf("events %v", evs)
	}
}

// TestSchemaFingerprint: the fingerprint follows the columns, not the
// schema metadata (which every view refresh rewrites).
func TestSchemaFingerprint(t *testing.T) {
	dir := t.TempDir()
	root := createTable(t, dir, "src", 5, false)
	w := syncWatcher(t, dir)
	w.Watch("src", 0)
	w.scanNow(t, false)
	v2 := appendRows(t, root, 5, 6)
	ctx := context.Background()
	tbl, err := lance.Open(ctx, vfs.OS(), root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Commit(ctx, must(tbl.Checkout(ctx, 0)), &lance.Commit{SchemaMetadata: map[string]string{"mv.source_version": "7"}}); err != nil {
		t.Fatal(err)
	}
	wide := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	schema, err := lance.NewSchemaFromArrow(wide)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, wide)
	b.Field(0).(*array.Int64Builder).Append(1)
	b.Field(1).(*array.StringBuilder).Append("a")
	rec := b.NewRecordBatch()
	b.Release()
	frags, err := datawriter.WriteFragments(vfs.OS(), root, schema, "2.2", []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Commit(ctx, must(tbl.Checkout(ctx, 0)), &lance.Commit{Overwrite: true, Schema: schema, Fragments: frags}); err != nil {
		t.Fatal(err)
	}
	evs := w.scanNow(t, false)
	checkContiguous(t, evs, 1, v2+2)
	if evs[0].SchemaFingerprint == "" || evs[0].SchemaFingerprint != evs[1].SchemaFingerprint {
		t.Errorf("metadata-only commit changed the fingerprint: %q -> %q", evs[0].SchemaFingerprint, evs[1].SchemaFingerprint)
	}
	if evs[2].SchemaFingerprint == evs[1].SchemaFingerprint || evs[2].Operation != "overwrite" {
		t.Errorf("new column, same fingerprint %q (op %s)", evs[2].SchemaFingerprint, evs[2].Operation)
	}
}

// TestWatchVersions: a table watched for its versions only gets every
// version, without change sets; Watch brings them back from the next one.
func TestWatchVersions(t *testing.T) {
	dir := t.TempDir()
	root := createTable(t, dir, "v", 10, false)
	c := startWatcher(t, Options{Dir: dir, Mode: ModePoll})
	c.waitFor("v added", hasEvent(KindAdded, "v", 1))
	c.w.WatchVersions("v")
	var last uint64
	for i := int64(0); i < 5; i++ {
		last = appendRows(t, root, 100+i, 101+i)
		c.waitFor("version", hasEvent(KindVersion, "v", last))
	}
	for _, ev := range ofTable(c.snapshot(), "v", KindVersion) {
		if ev.Changes != nil || ev.Err != nil || ev.Operation != "append" {
			t.Errorf("%v: changes %v, err %v, op %q; want no change set, no error, an append", ev, ev.Changes, ev.Err, ev.Operation)
		}
	}
	c.w.Watch("v", 0) // applied at the watcher's next look
	deadline := time.Now().Add(10 * time.Second)
	for {
		last = appendRows(t, root, 200+int64(last), 201+int64(last))
		evs := c.waitFor("version", hasEvent(KindVersion, "v", last))
		vs := ofTable(evs, "v", KindVersion)
		if ev := vs[len(vs)-1]; ev.Changes != nil {
			if n := ev.Changes.Inserted.GetCardinality(); n != 1 {
				t.Errorf("%v: %d rows inserted, want 1", ev, n)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Watch did not bring the change sets back")
		}
	}
	vs := ofTable(c.snapshot(), "v", KindVersion)
	for i, ev := range vs {
		if ev.From != uint64(i)+1 || ev.To != uint64(i)+2 {
			t.Errorf("event %d: %v, want %d->%d", i, ev, i+1, i+2)
		}
	}
	if len(vs) == 0 || vs[len(vs)-1].To != last {
		t.Errorf("versions reported up to %v, want %d", vs, last)
	}
}
