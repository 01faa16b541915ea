package matview

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/errorfs"
)

// failVersionsSync fails, while on, every sync of a _versions/ directory
// under the given table directory.
type failVersionsSync struct {
	on    atomic.Bool
	table string
}

func (f *failVersionsSync) MaybeInject(p errorfs.Point) error {
	if f.on.Load() && p.Op == errorfs.OpSyncDir && strings.HasSuffix(p.Path, f.table+"/_versions") {
		return errorfs.ErrInjected
	}
	return nil
}

// TestDurabilityModes: by default a refresh that moves only the watermark
// returns before its version's name is synced, and a failure of that sync
// fails the view's later refreshes (vfs.ErrNotDurable) until the database
// is reopened; a refresh with rows, and any refresh with durability
// strict, reports the failed sync itself (lance.ErrCommitUncertain).
func TestDurabilityModes(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{"", vfs.DurabilityFsync, vfs.DurabilityStrict} {
		t.Run("mode="+mode, func(t *testing.T) {
			dir := t.TempDir()
			src := newGoSource(t, vfs.OS(), dir, "src", 100)
			inj := &failVersionsSync{table: "v" + lance.TableSuffix}
			db := openDBWith(t, dir, Options{FS: errorfs.Wrap(vfs.OS(), inj), Durability: mode})
			v := must[*View](t)(db.CreateView(ctx, "v", "src", Definition{Where: "amount > 20"}))
			must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))

			// Rows: the failed sync is the refresh's own error.
			src.append(t, 121, 131) // amounts 21..30: all in the view
			inj.on.Store(true)
			_, err := v.Refresh(ctx, RefreshOptions{})
			inj.on.Store(false)
			if !errors.Is(err, lance.ErrCommitUncertain) {
				t.Fatalf("a refresh with rows whose name's sync fails: %v; want ErrCommitUncertain", err)
			}

			// The watermark alone.
			src.deleteWhere(t, func(id int64) bool { return id != 3 }) // amount 3: not in the view
			before := mustLatest(t, v).Version
			inj.on.Store(true)
			res, err := v.Refresh(ctx, RefreshOptions{})
			if err == nil {
				err = v.Table().WaitDurable()
			}
			inj.on.Store(false)
			if mode == vfs.DurabilityStrict {
				if !errors.Is(err, lance.ErrCommitUncertain) {
					t.Fatalf("strict: a watermark-only refresh whose name's sync fails: %v, %v; want ErrCommitUncertain", res, err)
				}
				return
			}
			if res == nil || res.Mode != ModeIncremental || res.RowsWritten != 0 || res.Version != before+1 {
				t.Fatalf("a watermark-only refresh: %+v; want incremental, 0 rows, version %d", res, before+1)
			}
			if !errors.Is(err, vfs.ErrNotDurable) || !errors.Is(err, errorfs.ErrInjected) {
				t.Fatalf("after its name's sync failed: %v; want vfs.ErrNotDurable", err)
			}
			src.append(t, 140, 150)
			if _, err := v.Refresh(ctx, RefreshOptions{}); !errors.Is(err, vfs.ErrNotDurable) || !errors.Is(err, ErrStorage) || errors.Is(err, ErrInvalid) {
				t.Fatalf("the refresh after a failed deferred sync: %v; want vfs.ErrNotDurable, a storage failure, not bad input", err)
			}
			if got := mustLatest(t, v).Version; got != before+1 {
				t.Fatalf("the refused refresh moved the view from version %d to %d", before+1, got)
			}
			if err := db.Close(); !errors.Is(err, vfs.ErrNotDurable) {
				t.Fatalf("closing the database: %v; want vfs.ErrNotDurable", err)
			}
			db2 := openDB(t, dir)
			mustRefresh(t, db2, "v", RefreshOptions{}, ModeIncremental, 10)
		})
	}
}

// TestLostWatermarkCommit is the power loss the default durability
// allows: a watermark-only version of an upstream view is gone after
// the view downstream of it recorded it as its watermark, and the
// upstream view then commits that version number again, with rows. The
// downstream view must not skip those rows: its watermark's commit time
// no longer matches, so it rebuilds.
func TestLostWatermarkCommit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := newGoSource(t, vfs.OS(), dir, "src", 100)
	db := openDB(t, dir)
	must[*View](t)(db.CreateView(ctx, "up", "src", Definition{Where: "amount > 20"}))
	must[*View](t)(db.CreateView(ctx, "down", "up", Definition{Select: []plan.Projection{{Output: "id", Expression: "`id`"}, {Output: "amount", Expression: "`amount`"}}}))
	mustRefresh(t, db, "up", RefreshOptions{}, ModeRebuild, ^uint64(0))
	mustRefresh(t, db, "down", RefreshOptions{}, ModeRebuild, ^uint64(0))

	src.deleteWhere(t, func(id int64) bool { return id != 7 }) // not in up
	r := mustRefresh(t, db, "up", RefreshOptions{}, ModeIncremental, 0)
	mustRefresh(t, db, "down", RefreshOptions{}, ModeIncremental, 0)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// The power loss: up's last version is gone, its hint may name it.
	vdir := filepath.Join(dir, "up"+lance.TableSuffix, "_versions")
	names, err := os.ReadDir(vdir)
	if err != nil {
		t.Fatal(err)
	}
	removed := false
	for _, e := range names {
		// V1 names count up, V2 names (20 digits) count down from MaxUint64.
		n, ok := strings.CutSuffix(e.Name(), ".manifest")
		num, err := strconv.ParseUint(n, 10, 64)
		if ok && err == nil && (num == r.Version || len(n) == 20 && math.MaxUint64-num == r.Version) {
			if err := os.Remove(filepath.Join(vdir, e.Name())); err != nil {
				t.Fatal(err)
			}
			removed = true
		}
	}
	if !removed {
		t.Fatalf("no manifest of version %d in %v", r.Version, names)
	}

	db2 := openDB(t, dir)
	src.append(t, 100, 130)
	r2 := mustRefresh(t, db2, "up", RefreshOptions{}, ModeIncremental, ^uint64(0))
	if r2.Version != r.Version || r2.RowsWritten == 0 {
		t.Fatalf("up refreshed to %+v; want version %d again, with rows", r2, r.Version)
	}
	res := mustRefresh(t, db2, "down", RefreshOptions{}, ModeRebuild, ^uint64(0))
	if res.Reason == "" {
		t.Fatalf("down rebuilt without a reason: %+v", res)
	}
	t.Logf("down: %s (%s)", res.Mode, res.Reason)
}
