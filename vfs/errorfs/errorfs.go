// Package errorfs wraps a vfs.FS and injects errors at chosen mutating
// operations, so tests can prove that a failure at any write, sync, link,
// rename, create or directory sync leaves durable state consistent.
//
// The intended use is deterministic enumeration: run an operation once over
// a Counter to learn how many injection points it has, then run it again
// for each n in 1..Count() over FailNth(n), checking the invariants after
// each failure.
package errorfs

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/mvd-project/mvd/vfs"
)

// ErrInjected is the error every injected failure wraps.
var ErrInjected = errors.New("errorfs: injected error")

// Op is a kind of mutating filesystem operation.
type Op uint32

// The operations at which errors can be injected.
const (
	OpCreate Op = 1 << iota
	OpWrite
	OpSync
	OpClose
	OpLink
	OpRename
	OpRemove
	OpMkdirAll
	OpSyncDir
	OpPutIfAbsent
)

// OpAll selects every injectable operation.
const OpAll = OpCreate | OpWrite | OpSync | OpClose | OpLink | OpRename | OpRemove | OpMkdirAll | OpSyncDir | OpPutIfAbsent

// OpDurable selects the operations whose failure a writer must treat as
// fatal: everything except the best-effort cleanup of Remove and Close.
const OpDurable = OpCreate | OpWrite | OpSync | OpLink | OpRename | OpMkdirAll | OpSyncDir | OpPutIfAbsent

func (o Op) String() string {
	switch o {
	case OpCreate:
		return "create"
	case OpWrite:
		return "write"
	case OpSync:
		return "sync"
	case OpClose:
		return "close"
	case OpLink:
		return "link"
	case OpRename:
		return "rename"
	case OpRemove:
		return "remove"
	case OpMkdirAll:
		return "mkdirall"
	case OpSyncDir:
		return "syncdir"
	case OpPutIfAbsent:
		return "putifabsent"
	}
	return fmt.Sprintf("op(%#x)", uint32(o))
}

// Point is one injection point: an operation on a path.
type Point struct {
	Op   Op
	Path string
}

func (p Point) String() string { return p.Op.String() + " " + p.Path }

// Injector decides, for each mutating operation, whether it fails. A nil
// result lets the operation proceed. Implementations must be safe for
// concurrent use.
type Injector interface {
	MaybeInject(p Point) error
}

// FS is a vfs.FS whose mutating operations consult an Injector first. An
// injected failure happens before the operation, so the inner filesystem
// is left exactly as if the call had never been made.
type FS struct {
	inner vfs.FS
	inj   Injector
}

// Wrap returns inner with errors injected by inj.
func Wrap(inner vfs.FS, inj Injector) *FS { return &FS{inner: inner, inj: inj} }

var (
	_ vfs.FS          = (*FS)(nil)
	_ vfs.ObjectStore = (*FS)(nil)
	_ vfs.BatchWriter = (*FS)(nil)
	_ vfs.Preparer    = (*FS)(nil)
)

func (f *FS) check(op Op, path string) error {
	if err := f.inj.MaybeInject(Point{Op: op, Path: path}); err != nil {
		return err
	}
	return nil
}

// Open implements vfs.FS; reads are never failed.
func (f *FS) Open(name string) (vfs.File, error) { return f.inner.Open(name) }

// Create implements vfs.FS.
func (f *FS) Create(name string) (vfs.WritableFile, error) {
	if err := f.check(OpCreate, name); err != nil {
		return nil, err
	}
	w, err := f.inner.Create(name)
	if err != nil {
		return nil, err
	}
	return &file{WritableFile: w, fs: f, name: name}, nil
}

// Link implements vfs.FS.
func (f *FS) Link(oldname, newname string) error {
	if err := f.check(OpLink, newname); err != nil {
		return err
	}
	return f.inner.Link(oldname, newname)
}

// Rename implements vfs.FS.
func (f *FS) Rename(oldname, newname string) error {
	if err := f.check(OpRename, newname); err != nil {
		return err
	}
	return f.inner.Rename(oldname, newname)
}

// Remove implements vfs.FS.
func (f *FS) Remove(name string) error {
	if err := f.check(OpRemove, name); err != nil {
		return err
	}
	return f.inner.Remove(name)
}

// MkdirAll implements vfs.FS.
func (f *FS) MkdirAll(dir string) error {
	if err := f.check(OpMkdirAll, dir); err != nil {
		return err
	}
	return f.inner.MkdirAll(dir)
}

// ReadDir implements vfs.FS.
func (f *FS) ReadDir(dir string) ([]string, error) { return f.inner.ReadDir(dir) }

// Stat implements vfs.FS.
func (f *FS) Stat(name string) (fs.FileInfo, error) { return f.inner.Stat(name) }

// SyncDir implements vfs.FS.
func (f *FS) SyncDir(dir string) error {
	if err := f.check(OpSyncDir, dir); err != nil {
		return err
	}
	return f.inner.SyncDir(dir)
}

// PutIfAbsent implements vfs.ObjectStore. A fault can be injected at the
// primitive itself (OpPutIfAbsent, before anything is written) and, over
// a local filesystem, at each step of the local protocol it runs through
// this FS (create, write, sync, link, directory sync).
func (f *FS) PutIfAbsent(name string, data []byte) error {
	if err := f.check(OpPutIfAbsent, name); err != nil {
		return err
	}
	if o, ok := f.inner.(vfs.ObjectStore); ok {
		return o.PutIfAbsent(name, data)
	}
	return vfs.PutIfAbsentLocal(f, name, data)
}

// WriteDeferred implements vfs.BatchWriter. Over a local filesystem every
// step (create, write, and later the batch's sync and directory sync) is
// an injection point; over an object store the write is one
// OpPutIfAbsent.
func (f *FS) WriteDeferred(name string, data []byte, b *vfs.SyncBatch) error {
	if o, ok := f.inner.(vfs.ObjectStore); ok {
		if err := f.check(OpPutIfAbsent, name); err != nil {
			return err
		}
		return vfs.WriteDeferred(o, name, data, b)
	}
	return vfs.LocalObjects{FS: f}.WriteDeferred(name, data, b)
}

// Stage implements vfs.BatchWriter. A fault can be injected at the
// primitive (OpPutIfAbsent, before anything is written) and, over a local
// filesystem, at each step of the protocol: create and write here, the
// batch's sync, then link and directory sync at Publish.
func (f *FS) Stage(name string, data []byte, b *vfs.SyncBatch) (vfs.Staged, error) {
	if err := f.check(OpPutIfAbsent, name); err != nil {
		return nil, err
	}
	if o, ok := f.inner.(vfs.ObjectStore); ok {
		return vfs.Stage(o, name, data, b)
	}
	return vfs.LocalObjects{FS: f}.Stage(name, data, b)
}

// PrepareStage implements vfs.Preparer. Over a local filesystem the
// staging file's creation (here), write, sync, link and directory sync
// are injection points; over an object store it is refused, so callers
// fall back to Stage (and its OpPutIfAbsent point).
func (f *FS) PrepareStage(dir string) (*vfs.PreparedStage, error) {
	if _, ok := f.inner.(vfs.ObjectStore); ok {
		return nil, fmt.Errorf("prepare %s: %w", dir, errors.ErrUnsupported)
	}
	return vfs.LocalObjects{FS: f}.PrepareStage(dir)
}

// Put implements vfs.ObjectStore through this FS's create and rename.
func (f *FS) Put(name string, data []byte) error {
	if o, ok := f.inner.(vfs.ObjectStore); ok {
		if err := f.check(OpCreate, name); err != nil {
			return err
		}
		return o.Put(name, data)
	}
	return vfs.LocalObjects{FS: f}.Put(name, data)
}

// List implements vfs.ObjectStore; listings are never failed.
func (f *FS) List(dir string) ([]string, error) {
	if o, ok := f.inner.(vfs.ObjectStore); ok {
		return o.List(dir)
	}
	return vfs.LocalObjects{FS: f.inner}.List(dir)
}

// Delete implements vfs.ObjectStore as an OpRemove.
func (f *FS) Delete(name string) error {
	if err := f.check(OpRemove, name); err != nil {
		return err
	}
	if o, ok := f.inner.(vfs.ObjectStore); ok {
		return o.Delete(name)
	}
	return f.inner.Remove(name)
}

// file injects errors into the writes, syncs and close of a created file.
type file struct {
	vfs.WritableFile
	fs   *FS
	name string
}

func (w *file) Write(p []byte) (int, error) {
	if err := w.fs.check(OpWrite, w.name); err != nil {
		return 0, err
	}
	return w.WritableFile.Write(p)
}

func (w *file) Sync() error {
	if err := w.fs.check(OpSync, w.name); err != nil {
		return err
	}
	return w.WritableFile.Sync()
}

func (w *file) Close() error {
	if err := w.fs.check(OpClose, w.name); err != nil {
		// The descriptor is still released: a failed close must not leak.
		_ = w.WritableFile.Close()
		return err
	}
	return w.WritableFile.Close()
}

// Counter is an Injector that never fails and records every injection
// point it sees among the selected operations.
type Counter struct {
	ops    Op
	mu     sync.Mutex
	points []Point
}

// NewCounter returns a Counter of the operations in ops.
func NewCounter(ops Op) *Counter { return &Counter{ops: ops} }

// MaybeInject implements Injector.
func (c *Counter) MaybeInject(p Point) error {
	if p.Op&c.ops == 0 {
		return nil
	}
	c.mu.Lock()
	c.points = append(c.points, p)
	c.mu.Unlock()
	return nil
}

// Count returns how many injection points were seen.
func (c *Counter) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.points)
}

// Points returns the injection points seen, in order.
func (c *Counter) Points() []Point {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Point(nil), c.points...)
}

// Nth is an Injector that fails the n-th (1-based) selected operation, and
// only that one, with an error wrapping ErrInjected.
type Nth struct {
	ops   Op
	n     int
	match func(Point) bool
	mu    sync.Mutex
	seen  int
	hit   *Point
}

// FailNth returns an Injector failing the n-th operation among ops.
func FailNth(n int, ops Op) *Nth { return &Nth{ops: ops, n: n} }

// FailNthMatching returns an Injector failing the n-th operation among
// ops for which match returns true. Operations that run concurrently (a
// vfs.SyncBatch syncs its files at once) reach the injector in any order,
// so enumerating them by global index is not deterministic; enumerating
// by what they touch (match) and their rank among those is.
func FailNthMatching(n int, ops Op, match func(Point) bool) *Nth {
	return &Nth{ops: ops, n: n, match: match}
}

// MaybeInject implements Injector.
func (x *Nth) MaybeInject(p Point) error {
	if p.Op&x.ops == 0 || x.match != nil && !x.match(p) {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.seen++
	if x.seen != x.n {
		return nil
	}
	x.hit = &p
	return fmt.Errorf("%w at %s (point %d)", ErrInjected, p, x.n)
}

// Injected returns the point that was failed, or false if the operation
// ended before reaching it.
func (x *Nth) Injected() (Point, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.hit == nil {
		return Point{}, false
	}
	return *x.hit, true
}
