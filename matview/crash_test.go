package matview

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/errorfs"
)

// copyDir copies a directory tree (the state before a refresh).
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if info.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRefreshCrashAtEveryWrite fails each write, sync, link, rename and
// directory sync of a refresh in turn (first refresh = rebuild, then an
// incremental one with evictions and appends, capped and not, then one
// that moves only the watermark, whose name is synced after it returns,
// DeferSync): the view
// stays readable, at its previous version with its old watermark unless
// the commit itself was published, and the next refresh gives exactly the
// right rows.
func TestRefreshCrashAtEveryWrite(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		def  Definition
	}{
		{"plain", Definition{Where: "amount > 20"}},
		{"capped", Definition{Where: "amount > 20", Limit: u64(30)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			src := newGoSource(t, vfs.OS(), base, "src", 100)
			db := openDB(t, base)
			must[*View](t)(db.CreateView(ctx, "v", "src", tc.def))
			steps := []func(){
				func() {}, // the first refresh: a rebuild
				func() {
					src.deleteWhere(t, func(id int64) bool { return id%4 != 0 })
					src.append(t, 100, 140)
				},
				func() { src.deleteWhere(t, func(id int64) bool { return id%100 != 5 }) }, // not in the view
			}
			for si, prepare := range steps {
				prepare()
				// Count the injection points of this refresh on a copy.
				probe := t.TempDir()
				copyDir(t, base, probe)
				counter := errorfs.NewCounter(errorfs.OpAll)
				cdb := openDBWith(t, probe, Options{FS: errorfs.Wrap(vfs.OS(), counter)})
				cv := must[*View](t)(cdb.OpenView(context.Background(), "v"))
				must[*Result](t)(cv.Refresh(ctx, RefreshOptions{}))
				if err := cv.Table().WaitDurable(); err != nil { // a deferred name sync counts
					t.Fatal(err)
				}
				if counter.Count() < 4 {
					t.Fatalf("step %d: only %d injection points", si, counter.Count())
				}
				for n := 1; n <= counter.Count(); n++ {
					dir := t.TempDir()
					copyDir(t, base, dir)
					before := must[*lance.Snapshot](t)(must[*lance.Table](t)(lance.Open(ctx, vfs.OS(), filepath.Join(dir, "v.lance"))).Latest(ctx))
					fdb := openDBWith(t, dir, Options{FS: errorfs.Wrap(vfs.OS(), errorfs.FailNth(n, errorfs.OpAll))})
					fv, err := fdb.OpenView(context.Background(), "v")
					var res *Result
					if err == nil {
						if res, err = fv.Refresh(ctx, RefreshOptions{}); err == nil {
							err = fv.Table().WaitDurable() // a failure after it returned
						}
					}
					if err != nil && !errors.Is(err, errorfs.ErrInjected) && !errors.Is(err, lance.ErrCommitUncertain) {
						t.Fatalf("step %d, failure %d: %v", si, n, err)
					}
					if checkFailedRefresh(t, dir, before, fmt.Sprintf("step %d, failure %d", si, n)) &&
						res == nil && !errors.Is(err, lance.ErrCommitUncertain) && err != nil {
						t.Logf("step %d, failure %d: published, then %v", si, n, err)
					}
				}
				// Advance the real state.
				must[*Result](t)(must[*View](t)(db.OpenView(context.Background(), "v")).Refresh(ctx, RefreshOptions{}))
			}
		})
	}
}

// checkFailedRefresh checks the view v of the database in dir after a
// refresh that failed (or was made to fail) from version before: the view
// is readable, at before with its watermark, or one version on holding the
// whole refresh; then the next refresh gives exactly the right rows. It
// reports whether the failed refresh was published. what names the case.
func checkFailedRefresh(t *testing.T, dir string, before *lance.Snapshot, what string) (published bool) {
	t.Helper()
	ctx := context.Background()
	ndb := openDB(t, dir)
	nv := must[*View](t)(ndb.OpenView(ctx, "v"))
	after := must[*lance.Snapshot](t)(nv.Table().Latest(ctx))
	switch after.Version {
	case before.Version:
		if watermarkOf(after.Schema.Metadata) != watermarkOf(before.Schema.Metadata) {
			t.Fatalf("%s: the watermark moved without a commit", what)
		}
	case before.Version + 1:
		// Published (the failure came after the link, or in best-effort
		// cleanup): it must be the whole refresh.
		published = true
		checkView(t, ndb, "v")
	default:
		t.Fatalf("%s: view went from version %d to %d", what, before.Version, after.Version)
	}
	rowsOf(t, after) // readable
	if _, err := nv.Refresh(ctx, RefreshOptions{}); err != nil {
		t.Fatalf("%s: the next refresh: %v", what, err)
	}
	checkView(t, ndb, "v")
	return published
}
