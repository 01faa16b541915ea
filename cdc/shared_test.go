package cdc

import (
	"context"
	"sync"
	"testing"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// TestSharedHandles: with Options.OpenTable the watcher reads a table
// through the handle it returns, so another reader of that handle finds
// each new version decoded (its checkout reads nothing); when the handle's
// owner replaces it, the watcher follows before it reads the next version.
func TestSharedHandles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	root := createTable(t, dir, "src", 5, false)
	var (
		mu  sync.Mutex
		cur *lance.Table
	)
	share := func() (*lance.Table, *vfs.CountingFS) {
		fsys := vfs.NewCountingFS(vfs.OS(), nil)
		tbl, err := lance.Open(ctx, fsys, root)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		cur = tbl
		mu.Unlock()
		return tbl, fsys
	}
	first, firstFS := share()
	w, err := New(Options{Dir: dir, Mode: ModePoll, Buffer: 1000, Logger: quietLog,
		OpenTable: func(ctx context.Context, r string) (*lance.Table, error) {
			if r != root {
				return lance.Open(ctx, vfs.OS(), r)
			}
			mu.Lock()
			defer mu.Unlock()
			return cur, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	w.Watch("src", 0)
	w.scanNow(t, false)

	// decodedOnce: version v was read through the shared handle, and a
	// checkout of it there now reads nothing.
	decodedOnce := func(tbl *lance.Table, fsys *vfs.CountingFS, v uint64) {
		t.Helper()
		if fsys.BytesRead() == 0 {
			t.Fatalf("version %d: nothing read through the shared handle", v)
		}
		before := fsys.BytesRead()
		if _, err := tbl.Checkout(ctx, v); err != nil {
			t.Fatal(err)
		}
		if n := fsys.BytesRead() - before; n != 0 {
			t.Errorf("version %d: a checkout through the shared handle read %d bytes after the watcher's; want it decoded once", v, n)
		}
	}
	firstFS.Reset()
	v2 := appendRows(t, root, 5, 6)
	checkContiguous(t, w.scanNow(t, false), 1, v2)
	decodedOnce(first, firstFS, v2)

	// The owner replaces its handle (matview does after a failed read).
	second, secondFS := share()
	firstFS.Reset()
	v3 := appendRows(t, root, 6, 7)
	checkContiguous(t, w.scanNow(t, false), v2, v3)
	decodedOnce(second, secondFS, v3)
	if n := firstFS.BytesRead(); n != 0 {
		t.Errorf("the replaced handle read %d bytes of version %d", n, v3)
	}
}
