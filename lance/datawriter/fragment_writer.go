package datawriter

import (
	"errors"
	"path"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/internal/budget"
	"github.com/mvd-project/mvd/lance/internal/format"
	"github.com/mvd-project/mvd/vfs"
)

// writeAhead is how many batches Write may hand over before it waits for
// the writer's goroutine: enough to keep both sides busy, few enough to
// bound the memory of batches in flight.
const writeAhead = 4

// FragmentWriter writes a stream of record batches as new fragments of at
// most format.MaxRowsPerFragment rows. Encoding and writing run in the
// writer's own goroutine, overlapping the caller's work, and 2.1+ files
// are written page by page as rows arrive, so a large write (a view
// rebuild) holds about one page per column in memory rather than a
// fragment (2.0 files still gather a fragment's rows). It is not safe for
// concurrent use; Finish must be called, also after a failed Write, to end
// the goroutine.
type FragmentWriter struct {
	fsys    vfs.FS
	root    string
	schema  *format.Schema
	version format.FileVersion

	jobs     chan arrow.RecordBatch
	done     chan struct{}
	failed   chan struct{} // closed when the goroutine failed
	errOnce  sync.Once
	err      error // set before failed is closed
	frags    []format.NewFragment
	finished bool
	batch    *vfs.SyncBatch // DeferSync's; nil: each file is synced as written
	// limiter is the refresh's CPU budget (Limit); inline means no token
	// was free for the goroutine, and Write encodes in the caller.
	limiter *budget.Limiter
	inline  bool
	enc     fragmentEncoder // the inline writer's state
	// pageBytes, if > 0, is the page size a column gathers before it is
	// encoded (PageBytes).
	pageBytes int64
}

// NewFragmentWriter returns a writer of data files under root/data/ for
// the given table schema and data file version.
func NewFragmentWriter(fsys vfs.FS, root string, schema *format.Schema, version format.FileVersion) *FragmentWriter {
	return &FragmentWriter{fsys: fsys, root: root, schema: schema, version: version, failed: make(chan struct{})}
}

// DeferSync makes the files written from now on wait for b instead of
// being synced one by one: each is written and left open in b, with the
// data/ directory, and is durable only once b.Sync returns nil. A commit
// that syncs b with its own files (lance.Commit.Pending) pays for all its
// syncs at once. b must be synced before the fragments are referenced by
// anything published, and aborted if they never are. Call it before the
// first Write: the writer's goroutine hands files to b until Finish.
func (w *FragmentWriter) DeferSync(b *vfs.SyncBatch) { w.batch = b }

// Limit puts the writer under a refresh's CPU budget: its goroutine is a
// worker of l, started only if a token is free at the first Write;
// otherwise Write encodes and writes in the caller. Call it before the
// first Write.
func (w *FragmentWriter) Limit(l *budget.Limiter) { w.limiter = l }

// PageBytes bounds the rows a 2.1+ column gathers before they are encoded
// as a page to about n bytes (8 MiB by default), so that a refresh's
// memory budget bounds the writer's too. Call it before the first Write.
func (w *FragmentWriter) PageBytes(n int64) { w.pageBytes = n }

// Write adds a batch; its rows are encoded and written in the writer's
// goroutine, which keeps a reference to rec until then. An error of an
// earlier batch is returned here or by Finish.
func (w *FragmentWriter) Write(rec arrow.RecordBatch) error {
	if w.finished {
		return errFinished
	}
	if w.jobs == nil {
		w.start()
	}
	select {
	case <-w.failed:
		return w.err
	default:
	}
	if w.inline {
		if err := w.enc.write(rec); err != nil {
			w.enc.abandon()
			w.fail(err)
			return err
		}
		return nil
	}
	rec.Retain()
	w.jobs <- rec
	return nil
}

func (w *FragmentWriter) start() {
	w.jobs = make(chan arrow.RecordBatch, writeAhead)
	w.done = make(chan struct{})
	if w.limiter != nil && !w.limiter.TryAcquire() {
		w.inline = true
		w.enc.init(w)
		close(w.done)
		return
	}
	go w.run()
}

// fail records the goroutine's first error.
func (w *FragmentWriter) fail(err error) {
	w.errOnce.Do(func() {
		w.err = err
		close(w.failed)
	})
}

// run is the writer's goroutine: it writes the batches of w.jobs until the
// channel is closed; after an error it only releases them.
func (w *FragmentWriter) run() {
	defer close(w.done)
	defer w.limiter.Release() // a nil limiter's is a no-op
	var e fragmentEncoder
	e.init(w)
	for rec := range w.jobs {
		if w.err == nil {
			if err := e.write(rec); err != nil {
				e.abandon()
				w.fail(err)
			}
		}
		rec.Release()
	}
	if w.err == nil {
		if err := e.flush(); err != nil {
			e.abandon()
			w.fail(err)
		}
	}
	w.frags = e.done
}

// Finish writes the last, partial fragment and returns every fragment
// written, ready for a lance.Commit. Files of fragments never committed
// are unreferenced garbage, like any failed write's; after an error the
// files of the fragments completed are still returned with it, for the
// caller to remove.
func (w *FragmentWriter) Finish() ([]format.NewFragment, error) {
	if w.finished || w.jobs == nil {
		w.finished = true
		return nil, nil
	}
	w.finished = true
	close(w.jobs)
	<-w.done
	if w.inline {
		if w.err == nil {
			if err := w.enc.flush(); err != nil {
				w.enc.abandon()
				w.fail(err)
			}
		}
		w.frags = w.enc.done
	}
	out := w.frags
	w.frags = nil
	if w.err != nil {
		return out, w.err
	}
	return out, nil
}

// fragmentEncoder is the state of the writer's goroutine.
type fragmentEncoder struct {
	w      *FragmentWriter
	layout fileLayout
	lerr   error
	dir    string
	// 2.1+: the file being written.
	file *streamFile
	// 2.0: the rows of the fragment being gathered.
	pending []arrow.RecordBatch
	rows    int64
	done    []format.NewFragment
}

func (e *fragmentEncoder) init(w *FragmentWriter) {
	e.w = w
	e.layout, e.lerr = parseVersion(w.version)
	e.dir = path.Join(w.root, "data")
}

// write adds one batch, cutting fragments at format.MaxRowsPerFragment.
func (e *fragmentEncoder) write(rec arrow.RecordBatch) error {
	if e.lerr != nil {
		return e.lerr
	}
	for off := int64(0); off < rec.NumRows(); {
		take := min(rec.NumRows()-off, format.MaxRowsPerFragment-e.rows)
		part := rec
		if off != 0 || take != rec.NumRows() {
			part = rec.NewSlice(off, off+take)
		} else {
			part.Retain()
		}
		err := e.add(part)
		part.Release()
		if err != nil {
			return err
		}
		e.rows += take
		off += take
		if e.rows == format.MaxRowsPerFragment {
			if err := e.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *fragmentEncoder) add(rec arrow.RecordBatch) error {
	if e.layout.v20 {
		rec.Retain()
		e.pending = append(e.pending, rec)
		return nil
	}
	if e.file == nil {
		if err := vfs.MkdirAllDurable(e.w.fsys, e.dir); err != nil {
			return err
		}
		f, err := newStreamFile(e.w.fsys, e.dir, e.w.schema, e.layout)
		if err != nil {
			return err
		}
		f.pageBytes = e.w.pageBytes
		e.file = f
	}
	return e.file.add(rec)
}

// flush completes the fragment being written, if it has rows.
func (e *fragmentEncoder) flush() error {
	if e.rows == 0 {
		return nil
	}
	e.rows = 0
	if e.layout.v20 {
		df, n, err := writeFile(e.w.fsys, e.w.root, e.w.schema, e.w.version, e.pending, e.w.batch)
		e.release()
		if err != nil {
			return err
		}
		e.done = append(e.done, format.NewFragment{Files: []format.DataFile{df}, PhysicalRows: n})
		return nil
	}
	f := e.file
	e.file = nil
	frag, err := f.finish(e.w.batch)
	if err != nil {
		return err
	}
	e.done = append(e.done, frag)
	return nil
}

func (e *fragmentEncoder) release() {
	for _, r := range e.pending {
		r.Release()
	}
	e.pending = nil
}

// abandon drops the fragment being written after an error.
func (e *fragmentEncoder) abandon() {
	e.release()
	if e.file != nil {
		e.file.abandon()
		e.file = nil
	}
	e.rows = 0
}

// errFinished is a Write after Finish.
var errFinished = errors.New("datawriter: write after Finish")

// WriteFragments writes recs as new fragments of at most
// format.MaxRowsPerFragment rows each, one data file per fragment.
func WriteFragments(fsys vfs.FS, root string, schema *format.Schema, version format.FileVersion, recs []arrow.RecordBatch) ([]format.NewFragment, error) {
	w := NewFragmentWriter(fsys, root, schema, version)
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			break
		}
	}
	frags, err := w.Finish()
	if err != nil {
		removeFragments(fsys, root, frags)
		return nil, err
	}
	return frags, nil
}

// removeFragments removes the data files of fragments never committed.
func removeFragments(fsys vfs.FS, root string, frags []format.NewFragment) {
	for _, f := range frags {
		for _, df := range f.Files {
			_ = fsys.Remove(path.Join(root, "data", df.Path))
		}
	}
}
