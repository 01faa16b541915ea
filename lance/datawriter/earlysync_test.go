package datawriter_test

import (
	"errors"
	"path"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/errorfs"
)

// TestDeferredSyncStartsEarly: a fragment written with DeferSync has its
// fsync started when the file is finished, and the batch reports that
// fsync's outcome: a failed one fails batch.Sync (it is not retried, nor
// lost), a good one leaves a durable, readable file; an aborted batch
// waits for the fsync before closing.
func TestDeferredSyncStartsEarly(t *testing.T) {
	as := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	schema, err := lance.NewSchemaFromArrow(as)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	for i := range 5000 {
		b.Append(int64(i))
	}
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(as, []arrow.Array{col}, 5000)
	defer rec.Release()
	write := func(fsys vfs.FS, root string, batch *vfs.SyncBatch) []lance.NewFragment {
		t.Helper()
		w := datawriter.NewFragmentWriter(fsys, root, schema, "2.2")
		w.DeferSync(batch)
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		frags, err := w.Finish()
		if err != nil || len(frags) != 1 {
			t.Fatalf("%v %v", frags, err)
		}
		return frags
	}

	// The data file's one sync fails: the batch says so.
	counter := errorfs.NewCounter(errorfs.OpSync)
	root := filepath.Join(t.TempDir(), "a.lance")
	fsys := errorfs.Wrap(vfs.OS(), errorfs.FailNth(1, errorfs.OpSync))
	batch := vfs.NewSyncBatch(fsys)
	write(fsys, root, batch)
	if err := batch.Sync(); !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("batch sync after a failed data file fsync: %v, want the injected error", err)
	}

	// A good sync: one fsync of the data file, the file reads back.
	root = filepath.Join(t.TempDir(), "b.lance")
	cfs := errorfs.Wrap(vfs.OS(), counter)
	batch = vfs.NewSyncBatch(cfs)
	frags := write(cfs, root, batch)
	if err := batch.Sync(); err != nil {
		t.Fatal(err)
	}
	syncs := 0
	for _, p := range counter.Points() {
		if p.Op == errorfs.OpSync && path.Base(p.Path) == frags[0].Files[0].Path {
			syncs++
		}
	}
	if syncs != 1 {
		t.Fatalf("the data file was synced %d times, want once (points %v)", syncs, counter.Points())
	}
	readBackGo(t, root, schema, frags[0].Files[0], rec)

	// Aborted: the file is closed (after its fsync) and can be removed.
	root = filepath.Join(t.TempDir(), "c.lance")
	batch = vfs.NewSyncBatch(vfs.OS())
	frags = write(vfs.OS(), root, batch)
	batch.Abort()
	if err := vfs.OS().Remove(path.Join(root, "data", frags[0].Files[0].Path)); err != nil {
		t.Fatal(err)
	}
}
