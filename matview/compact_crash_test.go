package matview

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/errorfs"
)

// fragmentedView makes view v over a Go-written source in base, refreshed
// after each of several one-row appends and a delete: many small
// fragments, one with deleted rows.
func fragmentedView(t *testing.T, base string) (*goSource, *DB) {
	t.Helper()
	ctx := context.Background()
	src := newGoSource(t, vfs.OS(), base, "src", 20)
	db := openDB(t, base)
	v := must[*View](t)(db.CreateView(ctx, "v", "src", Definition{Where: "amount > 3"}))
	must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	for i := int64(20); i < 30; i++ {
		src.append(t, i, i+1)
		must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	}
	src.deleteWhere(t, func(id int64) bool { return id != 25 && id != 7 })
	must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	return src, db
}

// versionRows reads the rows of every version of the view table at root.
func versionRows(t *testing.T, root string) map[uint64][]string {
	t.Helper()
	ctx := context.Background()
	tbl := must[*lance.Table](t)(lance.Open(ctx, vfs.OS(), root))
	latest := must[*lance.Snapshot](t)(tbl.Latest(ctx))
	out := map[uint64][]string{}
	for v := uint64(1); v <= latest.Version; v++ {
		out[v] = rowsOf(t, must[*lance.Snapshot](t)(tbl.Checkout(ctx, v)))
	}
	return out
}

// TestCompactCrashAtEveryWrite fails each write, sync, link, rename,
// removal and directory sync of a compaction step in turn: afterwards
// every version of the view opens and reads the rows it had, the view is
// at its old version or at the compacted one with the same rows, and the
// next compaction and refresh finish the job with exactly the right rows.
func TestCompactCrashAtEveryWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := t.TempDir()
	src, _ := fragmentedView(t, base)
	src.append(t, 30, 31) // for the refresh after the compaction
	want := versionRows(t, filepath.Join(base, "v.lance"))

	probe := t.TempDir()
	copyDir(t, base, probe)
	counter := errorfs.NewCounter(errorfs.OpAll)
	cdb := openDBWith(t, probe, Options{FS: errorfs.Wrap(vfs.OS(), counter)})
	if r := must[*CompactResult](t)(must[*View](t)(cdb.OpenView(ctx, "v")).Compact(ctx, CompactOptions{Force: true})); r.Version == 0 {
		t.Fatal("nothing compacted")
	}
	t.Logf("%d injection points", counter.Count())
	if counter.Count() < 4 {
		t.Fatalf("only %d injection points", counter.Count())
	}
	for n := 1; n <= counter.Count(); n++ {
		what := fmt.Sprintf("failure %d of %d", n, counter.Count())
		dir := t.TempDir()
		copyDir(t, base, dir)
		fdb := openDBWith(t, dir, Options{FS: errorfs.Wrap(vfs.OS(), errorfs.FailNth(n, errorfs.OpAll))})
		fv := must[*View](t)(fdb.OpenView(ctx, "v"))
		_, err := fv.Compact(ctx, CompactOptions{Force: true})
		if err == nil {
			err = fv.Table().WaitDurable()
		}
		if err != nil && !errors.Is(err, errorfs.ErrInjected) && !errors.Is(err, lance.ErrCommitUncertain) {
			t.Fatalf("%s: %v", what, err)
		}
		checkCompactedAfterFailure(t, dir, want, what)
	}
}

// checkCompactedAfterFailure checks the database in dir after a failed
// compaction of view v whose versions had the rows want.
func checkCompactedAfterFailure(t *testing.T, dir string, want map[uint64][]string, what string) {
	t.Helper()
	ctx := context.Background()
	got := versionRows(t, filepath.Join(dir, "v.lance"))
	last := uint64(len(want))
	for v, rows := range want {
		if !slices.Equal(got[v], rows) {
			t.Fatalf("%s: version %d reads other rows", what, v)
		}
	}
	switch uint64(len(got)) {
	case last:
	case last + 1:
		if !slices.Equal(got[last+1], want[last]) {
			t.Fatalf("%s: the compacted version holds other rows", what)
		}
	default:
		t.Fatalf("%s: view went from version %d to %d", what, last, len(got))
	}
	ndb := openDB(t, dir)
	nv := must[*View](t)(ndb.OpenView(ctx, "v"))
	for {
		r, err := nv.Compact(ctx, CompactOptions{Force: true})
		if err != nil {
			t.Fatalf("%s: the next compaction: %v", what, err)
		}
		if !r.More {
			break
		}
	}
	if m := mustLatest(t, nv); len(m.Fragments) != 1 {
		t.Fatalf("%s: %d fragments after the next compaction", what, len(m.Fragments))
	}
	if r := must[*Result](t)(nv.Refresh(ctx, RefreshOptions{})); r.Mode != ModeIncremental {
		t.Fatalf("%s: refresh after compaction: %+v", what, r)
	}
	checkView(t, ndb, "v")
}
