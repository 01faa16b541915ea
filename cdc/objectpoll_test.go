package cdc

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/s3fs"
	"github.com/mvd-project/mvd/vfs/s3fs/s3fstest"
)

// uploadTables writes the tables names (rows [0, 10) each, made on local
// disk) under prefix in the bucket.
func uploadTables(t *testing.T, store *s3fs.FS, prefix string, names ...string) {
	t.Helper()
	local := t.TempDir()
	for _, n := range names {
		createTable(t, local, n, 10, false)
	}
	err := filepath.Walk(local, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(local, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return store.Put(path.Join(prefix, filepath.ToSlash(rel)), b)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// appendRowsFS commits rows [lo, hi) to the table at root on fsys.
func appendRowsFS(t *testing.T, fsys vfs.FS, root string, lo, hi int64) uint64 {
	t.Helper()
	ctx := context.Background()
	tbl := must(lance.Open(ctx, fsys, root))
	m := must(tbl.Checkout(ctx, 0))
	frags := must(datawriter.WriteFragments(fsys, root, m.Schema, m.DataFileVersion, []arrow.RecordBatch{testRecord(lo, hi)}))
	return must(tbl.Commit(ctx, m, &lance.Commit{Fragments: frags})).Version
}

// pollOnce runs one poll of a hand-driven watcher and returns its events.
func (w *Watcher) pollOnce(t *testing.T) []Event {
	t.Helper()
	w.applyRequests(nil)
	if err := w.look(context.Background(), map[string]bool{}, false, true, false); err != nil {
		t.Fatal(err)
	}
	var out []Event
	for {
		select {
		case ev := <-w.events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

// TestObjectStorePollRequests: on an object store a poll costs one HEAD
// per watched table, whatever the number of tables nobody watches, and
// one LIST of the database once DirInterval has passed since the last;
// it still reports a commit, a new table and a drop. Counted at the S3
// server.
func TestObjectStorePollRequests(t *testing.T) {
	srv := s3fstest.Start(t, "bkt")
	store := srv.FS(t, "bkt")
	w, err := New(Options{FS: store, Dir: "db", Mode: ModePoll, ObjectStore: true, Buffer: 100000, Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	if evs := w.pollOnce(t); len(evs) != 0 {
		t.Fatalf("an empty prefix: events %v, want none (an empty database)", evs)
	}
	uploadTables(t, store, "db", "a", "b", "c", "u1", "u2", "u3", "u4")
	watched := []string{"a", "b", "c"}
	for _, n := range watched {
		w.Watch(n, 0)
	}
	w.scanNow(t, true)
	w.pollOnce(t)
	srv.Reset()
	const polls = 10
	count := func(dirInterval time.Duration, lists int) {
		t.Helper()
		srv.Reset()
		w.opts.DirInterval = dirInterval
		for range polls {
			if evs := w.pollOnce(t); len(evs) != 0 {
				t.Fatalf("quiet poll: events %v", evs)
			}
		}
		got := map[string]int{}
		reqs := srv.Requests()
		for _, r := range reqs {
			got[r.Kind()]++
		}
		want := map[string]int{"LIST": lists, "HEAD": polls * len(watched)}
		if len(reqs) != lists+polls*len(watched) || got["LIST"] != want["LIST"] || got["HEAD"] != want["HEAD"] {
			t.Fatalf("%d quiet polls of %d watched tables among 7, listing every %v: requests %v, want %v", polls, len(watched), dirInterval, got, want)
		}
	}
	count(time.Hour, 0)
	count(time.Nanosecond, polls)
	v := appendRowsFS(t, store, "db/b.lance", 10, 20)
	uploadTables(t, store, "db", "d")
	if err := vfs.RemoveAll(store, "db/u1.lance"); err != nil {
		t.Fatal(err)
	}
	srv.Reset()
	evs := w.pollOnce(t)
	for _, r := range srv.Requests() {
		if r.Kind() == "LIST" && strings.HasPrefix(r.Key, "db/b.lance/") && strings.HasSuffix(r.Key, ".manifest/") {
			t.Errorf("the poll that found b's version listed %s: a missing manifest was stat'ed (HEAD and LIST), not opened (one HEAD)", r.Key)
		}
	}
	if !hasEvent(KindVersion, "b", v)(evs) || !hasEvent(KindAdded, "d", 0)(evs) || !hasEvent(KindDropped, "u1", 0)(evs) {
		t.Fatalf("poll after a commit, a new table and a drop: %v", evs)
	}
	if ev := ofTable(evs, "b", KindVersion); len(ev) != 1 || ev[0].Changes == nil || ev[0].Changes.Inserted.GetCardinality() != 10 {
		t.Fatalf("b's version event: %v, want one with 10 rows inserted", ev)
	}
}
