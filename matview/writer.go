package matview

import (
	"path"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/provenance"
	"github.com/mvd-project/mvd/vfs"
)

// viewWriter writes a refresh's view rows as new fragments of the view,
// under the view's own schema; fragments never committed are removed.
type viewWriter struct {
	v      *View
	fw     *datawriter.FragmentWriter
	batch  *vfs.SyncBatch // the data files' syncs, done by the commit
	schema *arrow.Schema
	frags  []lance.NewFragment
	// A rebuild's writer keeps its rows' provenance compactly: the index
	// pairs, view rows numbered from nextView in write order, and the set
	// of source ids for the commit's key filter.
	prov      *provenance.Builder
	keys      *roaring64.Bitmap
	nextView  uint64
	provLost  bool // a batch without uint64 source ids: no index
	finished  bool
	committed bool
}

func (v *View) newWriter(vm *lance.Snapshot) (*viewWriter, error) {
	as, err := vm.Schema.Arrow()
	if err != nil {
		return nil, errorf(ErrUnsupported, err, "view '%s': schema: %v", v.name, err)
	}
	w := &viewWriter{v: v, schema: as, fw: datawriter.NewFragmentWriter(v.db.fs, v.table.Root(), vm.Schema, vm.DataFileVersion)}
	// The data files are synced by the commit, with its own files, in one
	// round of concurrent syncs (lance.Commit.Pending).
	w.batch = vfs.NewSyncBatch(v.db.fs)
	w.fw.DeferSync(w.batch)
	return w, nil
}

// newRebuildWriter is newWriter for a rebuild: the rows written get the
// view row ids from vm.NextRowID on, in order, and their provenance is
// gathered as an index.
func (v *View) newRebuildWriter(vm *lance.Snapshot) (*viewWriter, error) {
	w, err := v.newWriter(vm)
	if err != nil {
		return nil, err
	}
	w.prov, w.keys, w.nextView = &provenance.Builder{}, roaring64.New(), vm.NextRowID
	return w, nil
}

// write adds view rows; the batch takes the view table's own schema (the
// plan's has the same names, types and nullability).
func (w *viewWriter) write(rec arrow.RecordBatch) error {
	r := array.NewRecordBatch(w.schema, rec.Columns(), rec.NumRows())
	defer r.Release()
	if w.prov != nil {
		src := sourceIDs(rec)
		if len(src) != int(rec.NumRows()) {
			w.provLost = true
		}
		w.prov.AddRun(src, w.nextView)
		w.keys.AddMany(src)
		w.nextView += uint64(rec.NumRows())
	}
	return w.fw.Write(r)
}

func (w *viewWriter) finish() ([]lance.NewFragment, error) {
	w.finished = true
	frags, err := w.fw.Finish()
	w.frags = frags // on an error, the fragments completed: abort removes them
	return frags, err
}

// abort removes the data files of a refresh that did not commit.
func (w *viewWriter) abort() {
	if w.committed {
		return
	}
	if !w.finished {
		_, _ = w.finish()
	}
	w.batch.Abort() // no-op once a commit spent it
	for _, f := range w.frags {
		for _, df := range f.Files {
			_ = w.v.db.fs.Remove(path.Join(w.v.table.Root(), "data", df.Path))
		}
	}
}
