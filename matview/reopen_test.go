package matview

import (
	"context"
	"errors"
	"testing"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/errorfs"
)

// TestReopenAfterNotDurable: a view whose handle a failed background sync
// poisoned (every commit refused with vfs.ErrNotDurable, a storage
// failure, not bad input) is opened again as a new handle that commits,
// once the condition has cleared: what the daemon does to heal it.
func TestReopenAfterNotDurable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := newGoSource(t, vfs.OS(), dir, "src", 100)
	inj := &failVersionsSync{table: "v" + lance.TableSuffix}
	db := openDBWith(t, dir, Options{FS: errorfs.Wrap(vfs.OS(), inj)})
	v := must[*View](t)(db.CreateView(ctx, "v", "src", Definition{Where: "amount > 20"}))
	must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	src.deleteWhere(t, func(id int64) bool { return id != 3 }) // the watermark alone moves: its name syncs in the background
	inj.on.Store(true)
	_, err := v.Refresh(ctx, RefreshOptions{})
	if err == nil {
		err = v.Table().WaitDurable()
	}
	inj.on.Store(false)
	if !errors.Is(err, vfs.ErrNotDurable) {
		t.Fatalf("the watermark-only refresh whose name's sync fails: %v; want vfs.ErrNotDurable", err)
	}
	src.append(t, 140, 150)
	if _, err := v.Refresh(ctx, RefreshOptions{}); !errors.Is(err, vfs.ErrNotDurable) || !errors.Is(err, ErrStorage) || errors.Is(err, ErrInvalid) {
		t.Fatalf("a refresh on the poisoned handle: %v; want vfs.ErrNotDurable, a storage failure, not bad input", err)
	}
	v2, err := db.OpenView(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	if v2 == v {
		t.Fatal("OpenView gave back the poisoned handle")
	}
	res, err := v2.Refresh(ctx, RefreshOptions{})
	if err != nil || res.Mode != ModeIncremental || res.RowsWritten != 10 {
		t.Fatalf("refresh on the new handle: %+v, %v; want incremental, 10 rows", res, err)
	}
}
