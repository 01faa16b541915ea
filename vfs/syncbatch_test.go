package vfs_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/errorfs"
)

// syncRecorder records the syncs and closes that reach the disk.
type syncRecorder struct {
	vfs.FS
	mu     sync.Mutex
	synced []string
	closed []string
}

func (r *syncRecorder) note(list *[]string, name string) {
	r.mu.Lock()
	*list = append(*list, name)
	r.mu.Unlock()
}

func (r *syncRecorder) Create(name string) (vfs.WritableFile, error) {
	f, err := r.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return &recFile{WritableFile: f, r: r, name: name}, nil
}

func (r *syncRecorder) SyncDir(dir string) error {
	r.note(&r.synced, dir+"/")
	return r.FS.SyncDir(dir)
}

type recFile struct {
	vfs.WritableFile
	r    *syncRecorder
	name string
}

func (f *recFile) Sync() error  { f.r.note(&f.r.synced, f.name); return f.WritableFile.Sync() }
func (f *recFile) Close() error { f.r.note(&f.r.closed, f.name); return f.WritableFile.Close() }

// TestSyncBatch: nothing is synced until Sync, which syncs every file and
// directory once and closes every file; a spent batch refuses more.
func TestSyncBatch(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a", "b"} { // a new directory is synced into its parent at once
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rec := &syncRecorder{FS: vfs.OS()}
	b := vfs.NewSyncBatch(rec)
	for _, n := range []string{"a/1", "a/2", "b/3"} {
		if err := vfs.WriteNewFileDeferred(rec, filepath.Join(dir, n), []byte(n), b); err != nil {
			t.Fatal(err)
		}
	}
	if len(rec.synced) != 0 || len(rec.closed) != 0 {
		t.Fatalf("before Sync: synced %v, closed %v", rec.synced, rec.closed)
	}
	if b.Len() != 5 {
		t.Fatalf("batch holds %d, want 3 files and 2 directories", b.Len())
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	if len(rec.synced) != 5 || len(rec.closed) != 3 {
		t.Fatalf("after Sync: synced %v, closed %v", rec.synced, rec.closed)
	}
	for _, n := range []string{"a/1", "a/2", "b/3"} {
		if got, err := os.ReadFile(filepath.Join(dir, n)); err != nil || string(got) != n {
			t.Fatalf("%s: %q %v", n, got, err)
		}
	}
	if err := b.Sync(); err != nil || len(rec.synced) != 5 {
		t.Fatalf("a second Sync synced again (%v, %v)", err, rec.synced)
	}
	if err := vfs.WriteNewFileDeferred(rec, filepath.Join(dir, "late"), nil, b); !errors.Is(err, vfs.ErrBatchSpent) {
		t.Fatalf("write into a spent batch: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "late")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the refused file was left behind: %v", err)
	}
	var nilBatch *vfs.SyncBatch
	if err := nilBatch.Sync(); err != nil {
		t.Fatal(err)
	}
	nilBatch.Abort()
}

// TestSyncBatchFailure: one failed sync fails the batch with that error,
// every other file is still synced and closed (no descriptor leaks), and
// Abort closes without syncing.
func TestSyncBatchFailure(t *testing.T) {
	dir := t.TempDir()
	rec := &syncRecorder{FS: vfs.OS()}
	efs := errorfs.Wrap(rec, errorfs.FailNthMatching(1, errorfs.OpSync, func(p errorfs.Point) bool { return strings.HasSuffix(p.Path, "/2") }))
	b := vfs.NewSyncBatch(efs)
	for _, n := range []string{"1", "2", "3"} {
		if err := vfs.WriteNewFileDeferred(efs, filepath.Join(dir, n), []byte(n), b); err != nil {
			t.Fatal(err)
		}
	}
	err := b.Sync()
	if !errors.Is(err, errorfs.ErrInjected) || !strings.Contains(err.Error(), "/2") {
		t.Fatalf("Sync = %v, want the injected failure of file 2", err)
	}
	if len(rec.closed) != 3 {
		t.Fatalf("closed %v, want every file", rec.closed)
	}

	rec2 := &syncRecorder{FS: vfs.OS()}
	b2 := vfs.NewSyncBatch(rec2)
	if err := vfs.WriteNewFileDeferred(rec2, filepath.Join(dir, "x"), []byte("x"), b2); err != nil {
		t.Fatal(err)
	}
	b2.Abort()
	if len(rec2.synced) != 0 || len(rec2.closed) != 1 {
		t.Fatalf("Abort: synced %v, closed %v", rec2.synced, rec2.closed)
	}
}

// TestStagePublish: a staged object is invisible to List until Publish,
// which links it put-if-absent and runs afterLink; Discard leaves nothing.
func TestStagePublish(t *testing.T) {
	dir := t.TempDir()
	o := vfs.Objects(vfs.OS())
	name := filepath.Join(dir, "v", "1.manifest")
	b := vfs.NewSyncBatch(vfs.OS())
	st, err := vfs.Stage(o, name, []byte("one"), b)
	if err != nil {
		t.Fatal(err)
	}
	if names, _ := o.List(filepath.Join(dir, "v")); len(names) != 0 {
		t.Fatalf("staged object listed: %v", names)
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	ran := false
	if err := st.Publish(func() { ran = true }); err != nil || !ran {
		t.Fatalf("Publish = %v, afterLink ran %v", err, ran)
	}
	if got, err := vfs.ReadObject(o, name); err != nil || string(got) != "one" {
		t.Fatalf("published %q %v", got, err)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "v")); len(ents) != 1 {
		t.Fatalf("directory holds %d entries, want the object alone", len(ents))
	}
	// Put-if-absent: a second publish of the name fails with ErrExist.
	b = vfs.NewSyncBatch(vfs.OS())
	st, err = vfs.Stage(o, name, []byte("two"), b)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := st.Publish(nil); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second publish: %v", err)
	}
	if got, _ := vfs.ReadObject(o, name); string(got) != "one" {
		t.Fatalf("the first object was replaced: %q", got)
	}
	b = vfs.NewSyncBatch(vfs.OS())
	st, err = vfs.Stage(o, filepath.Join(dir, "v", "2.manifest"), []byte("x"), b)
	if err != nil {
		t.Fatal(err)
	}
	b.Abort()
	st.Discard()
	if ents, _ := os.ReadDir(filepath.Join(dir, "v")); len(ents) != 1 {
		t.Fatalf("a discarded object left %d entries", len(ents))
	}
}

// plainStore is an ObjectStore without batches.
type plainStore struct {
	vfs.ObjectStore
	puts int
}

func (p *plainStore) PutIfAbsent(name string, data []byte) error {
	p.puts++
	return p.ObjectStore.PutIfAbsent(name, data)
}

// TestDeferredFallback: on a store without batches WriteDeferred and
// Stage fall back to a durable PutIfAbsent.
func TestDeferredFallback(t *testing.T) {
	dir := t.TempDir()
	p := &plainStore{ObjectStore: vfs.LocalObjects{FS: vfs.OS()}}
	b := vfs.NewSyncBatch(vfs.OS())
	if err := vfs.WriteDeferred(p, filepath.Join(dir, "a"), []byte("a"), b); err != nil || p.puts != 1 || b.Len() != 0 {
		t.Fatalf("WriteDeferred: %v, %d puts, batch %d", err, p.puts, b.Len())
	}
	st, err := vfs.Stage(p, filepath.Join(dir, "b"), []byte("b"), b)
	if err != nil || p.puts != 1 {
		t.Fatalf("Stage: %v, %d puts", err, p.puts)
	}
	if err := st.Publish(nil); err != nil || p.puts != 2 {
		t.Fatalf("Publish: %v, %d puts", err, p.puts)
	}
}

// TestUnsynced: no file or directory sync reaches the disk, everything
// else does; WithDurability maps the configuration names.
func TestUnsynced(t *testing.T) {
	dir := t.TempDir()
	c := errorfs.NewCounter(errorfs.OpAll)
	u := vfs.Unsynced(errorfs.Wrap(vfs.OS(), c))
	if err := vfs.PutIfAbsentLocal(u, filepath.Join(dir, "x", "obj"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Points() {
		if p.Op == errorfs.OpSync || p.Op == errorfs.OpSyncDir {
			t.Errorf("%v reached the disk", p)
		}
	}
	if c.Count() == 0 {
		t.Fatal("nothing reached the disk")
	}
	if !vfs.IsUnsynced(u) || vfs.IsUnsynced(vfs.OS()) || vfs.Unsynced(u) != u {
		t.Error("IsUnsynced / Unsynced are not idempotent")
	}
	for mode, unsynced := range map[string]bool{"": false, "fsync": false, "none": true} {
		f, err := vfs.WithDurability(vfs.OS(), mode)
		if err != nil || vfs.IsUnsynced(f) != unsynced {
			t.Errorf("WithDurability(%q) = %v, %v", mode, f, err)
		}
	}
	if _, err := vfs.WithDurability(vfs.OS(), "fdatasync"); err == nil {
		t.Error("WithDurability accepted an unknown mode")
	}
}
