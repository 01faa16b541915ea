package matview

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mvd-project/mvd/provenance"
	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/errorfs"
)

// failIndexWrites fails, while on, every file created under a view's
// provenance directory: a disk that filled up after the view's commit.
type failIndexWrites struct{ on atomic.Bool }

func (f *failIndexWrites) MaybeInject(p errorfs.Point) error {
	if f.on.Load() && p.Op&(errorfs.OpCreate|errorfs.OpWrite|errorfs.OpMkdirAll|errorfs.OpRename) != 0 && strings.Contains(p.Path, "/"+provenance.Dir) {
		return errorfs.ErrInjected
	}
	return nil
}

// TestIndexNotSaved: a provenance index that cannot be saved after the
// view's commit landed (disk full) fails neither the refresh nor the
// close: the refresh reports its committed result with a warning (the
// refresh's own save: a rebuild's; the close's: Warnings), and the next
// refresh, on a fresh handle, rebuilds or catches up the index and keeps
// the view right.
func TestIndexNotSaved(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := newGoSource(t, vfs.OS(), dir, "src", 100)
	inj := &failIndexWrites{}
	db := openDBWith(t, dir, Options{FS: errorfs.Wrap(vfs.OS(), inj)})
	v := must[*View](t)(db.CreateView(ctx, "v", "src", Definition{Where: "amount > 20"}))

	// A rebuild saves the index it made: that save fails.
	inj.on.Store(true)
	res, err := v.Refresh(ctx, RefreshOptions{})
	if err != nil {
		t.Fatalf("a rebuild whose index cannot be saved: %v", err)
	}
	if res.Mode != ModeRebuild || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "provenance index of view 'v' was not saved") {
		t.Fatalf("rebuild %+v; want one warning about the index", res)
	}
	if j := string(res.AppendJSON(nil)); !strings.Contains(j, `"warnings":["the provenance index`) {
		t.Fatalf("JSON %s has no warnings", j)
	}
	// The close tries again, and reports a version's failure once.
	if err := db.Close(); err != nil || len(db.Warnings()) != 0 {
		t.Fatalf("close after the rebuild: %v, warnings %q; want none (the rebuild's result has it)", err, db.Warnings())
	}
	// A fresh handle builds the index cold, and saves it: that fails.
	v = must[*View](t)(db.OpenView(ctx, "v"))
	src.append(t, 120, 125)
	res, err = v.Refresh(ctx, RefreshOptions{})
	if err != nil || res.Mode != ModeIncremental || len(res.Warnings) != 1 {
		t.Fatalf("incremental refresh %+v, %v; want incremental with a warning", res, err)
	}
	// A warm index is saved at the close only.
	src.append(t, 125, 127)
	res, err = v.Refresh(ctx, RefreshOptions{})
	if err != nil || res.Mode != ModeIncremental || len(res.Warnings) != 0 {
		t.Fatalf("incremental refresh %+v, %v; want incremental without a warning", res, err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("close with an index that cannot be saved: %v", err)
	}
	if w := db.Warnings(); len(w) != 1 || !strings.Contains(w[0], "provenance index of view 'v' was not saved") {
		t.Fatalf("close's warnings %q; want one about the index", w)
	}
	if w := db.Warnings(); len(w) != 0 {
		t.Fatalf("warnings %q reported twice", w)
	}
	inj.on.Store(false)
	checkView(t, db, "v")

	// The next refresh, through a fresh handle, has no saved index.
	db2 := openDB(t, dir)
	src.deleteWhere(t, func(id int64) bool { return id != 121 && id != 50 })
	src.append(t, 130, 133)
	v2 := must[*View](t)(db2.OpenView(ctx, "v"))
	res, err = v2.Refresh(ctx, RefreshOptions{})
	if err != nil || res.Mode != ModeIncremental || len(res.Warnings) != 0 {
		t.Fatalf("the refresh after: %+v, %v; want incremental without a warning", res, err)
	}
	checkView(t, db2, "v")
	if err := db2.Close(); err != nil || len(db2.Warnings()) != 0 {
		t.Fatalf("close: %v, warnings %q", err, db2.Warnings())
	}
	if x, err := provenance.Load(vfs.OS(), v2.Table().Root(), v2.incarnation); err != nil || x.Version != res.Version {
		t.Fatalf("saved index: %v, %v; want version %d", x, err, res.Version)
	}
}
