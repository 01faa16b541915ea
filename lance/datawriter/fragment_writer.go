package datawriter

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/lance/internal/format"
	"github.com/mvd-project/mvd/vfs"
)

// FragmentWriter writes a stream of record batches as new fragments of at
// most format.MaxRowsPerFragment rows, so that a large write (a view
// rebuild) holds at most one fragment's rows in memory. It is not safe for
// concurrent use.
type FragmentWriter struct {
	fsys    vfs.FS
	root    string
	schema  *format.Schema
	version format.FileVersion
	pending []arrow.RecordBatch
	rows    int64
	done    []format.NewFragment
	batch   *vfs.SyncBatch
}

// NewFragmentWriter returns a writer of data files under root/data/ for
// the given table schema and data file version.
func NewFragmentWriter(fsys vfs.FS, root string, schema *format.Schema, version format.FileVersion) *FragmentWriter {
	return &FragmentWriter{fsys: fsys, root: root, schema: schema, version: version}
}

// DeferSync makes the files written from now on wait for b instead of
// being synced one by one: each is written and left open in b, with the
// data/ directory, and is durable only once b.Sync returns nil. A commit
// that syncs b with its own files (lance.Commit.Pending) pays for all its
// syncs at once. b must be synced before the fragments are referenced by
// anything published, and aborted if they never are.
func (w *FragmentWriter) DeferSync(b *vfs.SyncBatch) { w.batch = b }

// Write adds a batch; a fragment is written each time enough rows have
// accumulated. The writer keeps a reference to rec until then.
func (w *FragmentWriter) Write(rec arrow.RecordBatch) error {
	for off := int64(0); off < rec.NumRows(); {
		take := min(rec.NumRows()-off, format.MaxRowsPerFragment-w.rows)
		w.pending = append(w.pending, rec.NewSlice(off, off+take))
		w.rows += take
		off += take
		if w.rows == format.MaxRowsPerFragment {
			if err := w.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *FragmentWriter) flush() error {
	if w.rows == 0 {
		return nil
	}
	df, n, err := writeFile(w.fsys, w.root, w.schema, w.version, w.pending, w.batch)
	w.release()
	if err != nil {
		return err
	}
	w.done = append(w.done, format.NewFragment{Files: []format.DataFile{df}, PhysicalRows: n})
	return nil
}

func (w *FragmentWriter) release() {
	for _, r := range w.pending {
		r.Release()
	}
	w.pending, w.rows = nil, 0
}

// Finish writes the last, partial fragment and returns every fragment
// written, ready for a lance.Commit. Files of fragments never committed
// are unreferenced garbage, like any failed write's.
func (w *FragmentWriter) Finish() ([]format.NewFragment, error) {
	if err := w.flush(); err != nil {
		return nil, err
	}
	out := w.done
	w.done = nil
	return out, nil
}

// WriteFragments writes recs as new fragments of at most
// format.MaxRowsPerFragment rows each, one data file per fragment.
func WriteFragments(fsys vfs.FS, root string, schema *format.Schema, version format.FileVersion, recs []arrow.RecordBatch) ([]format.NewFragment, error) {
	w := NewFragmentWriter(fsys, root, schema, version)
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			w.release()
			return nil, err
		}
	}
	return w.Finish()
}
