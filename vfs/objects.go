package vfs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"
)

// ObjectStore is storage seen as an object store sees it: whole objects
// under slash-separated names, created once and never edited. It is the
// seam the table commit path writes through, so a store without
// directories or links (S3 and the like: conditional PUT, LIST with a
// prefix, ranged GET, DELETE) fits beside the local filesystem: a manifest
// publish is one PutIfAbsent.
//
// All methods are safe for concurrent use, from any number of processes.
type ObjectStore interface {
	// PutIfAbsent atomically creates the object name holding data, failing
	// with an error wrapping fs.ErrExist if it already exists. When it
	// returns nil the object is complete and durable; readers never see a
	// partial object. An error wrapping ErrNotDurable means the object was
	// created and is visible but may not survive a crash; any other error
	// means it was not created.
	PutIfAbsent(name string, data []byte) error
	// Put atomically replaces (or creates) the object name with data,
	// best effort: it is not made durable. It is for hints only.
	Put(name string, data []byte) error
	// Open opens an object for ranged reads (File.ReadAt).
	Open(name string) (File, error)
	// List returns the names, relative to dir, of the objects directly
	// under dir (the key prefix dir + "/"), in no particular order. It fails
	// with an error wrapping fs.ErrNotExist when there is nothing under dir.
	List(dir string) ([]string, error)
	// Delete removes an object; deleting one that does not exist wraps
	// fs.ErrNotExist.
	Delete(name string) error
}

// ErrNotDurable means an object was published but making it durable failed.
var ErrNotDurable = errors.New("object published but not known durable")

// Objects returns the object-store view of fsys: fsys itself when it
// implements ObjectStore (an object store, or a wrapper such as
// vfs/errorfs that injects faults at PutIfAbsent), else the local protocol
// over fsys's files (LocalObjects).
func Objects(fsys FS) ObjectStore {
	if o, ok := fsys.(ObjectStore); ok {
		return o
	}
	return LocalObjects{FS: fsys}
}

// LocalObjects implements ObjectStore over a filesystem with directories
// and hard links. PutIfAbsent is the durable protocol: write a temporary
// file in the target directory, fsync it, hard-link it to its final name
// (the link fails if the name exists: put-if-not-exists), remove the
// temporary name and fsync the directory. Parent directories are created
// durably as needed.
type LocalObjects struct {
	FS FS
}

var _ ObjectStore = LocalObjects{}

// PutIfAbsent implements ObjectStore.
func (l LocalObjects) PutIfAbsent(name string, data []byte) error {
	return PutIfAbsentLocal(l.FS, name, data)
}

// PutIfAbsentLocal is LocalObjects.PutIfAbsent over any FS; wrappers that
// implement ObjectStore themselves call it to keep the protocol's steps
// visible to their own faults and counters.
func PutIfAbsentLocal(fsys FS, name string, data []byte) error {
	dir := path.Dir(name)
	if err := MkdirAllDurable(fsys, dir); err != nil {
		return fmt.Errorf("put %s: create %s: %w", name, dir, err)
	}
	tmp := path.Join(dir, ".tmp_"+path.Base(name)+"_"+randomSuffix())
	if err := WriteNewFile(fsys, tmp, data); err != nil {
		return fmt.Errorf("put %s: %w", name, err)
	}
	linkErr := fsys.Link(tmp, name)
	_ = fsys.Remove(tmp) // the staged name is garbage either way
	if linkErr != nil {
		return fmt.Errorf("put %s: %w", name, linkErr)
	}
	// The object is visible now. A failed directory sync cannot be undone
	// safely (others may already use the object), so it is reported apart.
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("%w: %s is visible but syncing %s failed: %w", ErrNotDurable, name, dir, err)
	}
	return nil
}

// Put implements ObjectStore: a temporary file renamed over name.
func (l LocalObjects) Put(name string, data []byte) error {
	tmp := path.Join(path.Dir(name), ".tmp_"+path.Base(name)+"_"+randomSuffix())
	f, err := l.FS.Create(tmp)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	err = errors.Join(werr, f.Close())
	if err == nil {
		err = l.FS.Rename(tmp, name)
	}
	if err != nil {
		_ = l.FS.Remove(tmp)
	}
	return err
}

// Open implements ObjectStore.
func (l LocalObjects) Open(name string) (File, error) { return l.FS.Open(name) }

// List implements ObjectStore: the regular entries of the directory dir,
// without the temporary names PutIfAbsent and Put stage under.
func (l LocalObjects) List(dir string) ([]string, error) {
	names, err := l.FS.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := names[:0]
	for _, n := range names {
		if !strings.HasPrefix(n, ".tmp_") {
			out = append(out, n)
		}
	}
	return out, nil
}

// Delete implements ObjectStore.
func (l LocalObjects) Delete(name string) error { return l.FS.Remove(name) }

// WriteNewFile creates name (failing with fs.ErrExist if it exists), writes
// data and syncs it. On any failure the partial file is removed (best
// effort) and the error returned: a failed sync is never retried, since the
// page cache may have dropped the data.
func WriteNewFile(fsys FS, name string, data []byte) error {
	f, err := fsys.Create(name)
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	fail := func(op string, err error) error {
		_ = f.Close()
		_ = fsys.Remove(name)
		return fmt.Errorf("%s %s: %w", op, name, err)
	}
	if _, err := f.Write(data); err != nil {
		return fail("write", err)
	}
	if err := f.Sync(); err != nil {
		return fail("sync", err)
	}
	if err := f.Close(); err != nil {
		_ = fsys.Remove(name)
		return fmt.Errorf("close %s: %w", name, err)
	}
	return nil
}

func randomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// WholeReader is a store that reads a whole object in one request (S3:
// a GET without a range), where Open and ReadAt take two (the size, then
// the bytes).
type WholeReader interface {
	// ReadWhole returns the object's bytes; a missing object wraps
	// fs.ErrNotExist.
	ReadWhole(name string) ([]byte, error)
}

// ObjectStatter is a store that can describe an object without also
// looking for a directory of that name (S3: a HEAD, without the listing
// Stat adds for a missing key).
type ObjectStatter interface {
	// StatObject describes the object name; a missing object (even with
	// objects under name + "/") wraps fs.ErrNotExist.
	StatObject(name string) (fs.FileInfo, error)
}

// StatObject is ObjectStatter.StatObject on fsys when it implements it,
// else fsys.Stat.
func StatObject(fsys FS, name string) (fs.FileInfo, error) {
	if s, ok := fsys.(ObjectStatter); ok {
		return s.StatObject(name)
	}
	return fsys.Stat(name)
}

// SizedOpener is a store that can open an object whose size the caller
// knows without asking the store for it (S3: no HEAD before the first
// ranged GET).
type SizedOpener interface {
	// OpenSized opens name, of size bytes, for ranged reads. A missing
	// object may only show on the first read (wrapping fs.ErrNotExist).
	OpenSized(name string, size int64) (File, error)
}

// OpenSized opens name with its size known (size > 0) on a SizedOpener,
// else with Open.
func OpenSized(o ObjectStore, name string, size int64) (File, error) {
	if so, ok := o.(SizedOpener); ok && size > 0 {
		return so.OpenSized(name, size)
	}
	return o.Open(name)
}

// ReadObject reads the whole of an object: one ReadWhole on a WholeReader.
func ReadObject(o ObjectStore, name string) ([]byte, error) {
	if w, ok := o.(WholeReader); ok {
		return w.ReadWhole(name)
	}
	f, err := o.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f)
}

// BatchWriter is an ObjectStore whose writes can leave their durable step
// to a SyncBatch, so that every object of a commit is synced at once
// before the one object that publishes them (see SyncBatch). LocalObjects
// and vfs/errorfs implement it; use the functions WriteDeferred and Stage,
// which fall back to PutIfAbsent for any other store.
type BatchWriter interface {
	// WriteDeferred creates the new object name holding data. It is
	// durable once b.Sync returns nil, and may be visible, possibly
	// partial, before: it is for uniquely named objects that nothing reads
	// until a later publish references them (data, deletion and
	// transaction files). It fails if name exists.
	WriteDeferred(name string, data []byte, b *SyncBatch) error
	// Stage prepares PutIfAbsent(name, data) with its durable part in b:
	// after b.Sync returns nil, Staged.Publish makes the object visible
	// atomically (failing if it exists) and durable.
	Stage(name string, data []byte, b *SyncBatch) (Staged, error)
}

// Staged is a PutIfAbsent prepared by Stage: exactly one of Publish and
// Discard must be called.
type Staged interface {
	// Publish makes the object visible, with PutIfAbsent's contract: an
	// error wrapping fs.ErrExist if the name is taken, one wrapping
	// ErrNotDurable if it is visible but may not survive a crash, any
	// other error if it was not created. Call it only after the batch the
	// object was staged in has synced. afterLink, if not nil, runs once
	// the object is visible, concurrently with making it durable, and has
	// returned when Publish does (a commit writes its best-effort version
	// hint there).
	Publish(afterLink func()) error
	// Link makes the object visible as Publish does, with the same
	// errors for a taken name, but leaves its directory unsynced: the
	// object may not survive a crash until the caller syncs that
	// directory (FS.SyncDir). On a store without a separate name sync it
	// is Publish.
	Link() error
	// Discard drops the staged object without publishing it.
	Discard()
}

// WriteDeferred writes the new object name into b (BatchWriter), or, on
// a store without batches, puts it durably at once.
func WriteDeferred(o ObjectStore, name string, data []byte, b *SyncBatch) error {
	if w, ok := o.(BatchWriter); ok && b != nil {
		return w.WriteDeferred(name, data, b)
	}
	return o.PutIfAbsent(name, data)
}

// Stage stages PutIfAbsent(name, data) in b (BatchWriter), or, on a store
// without batches, returns a Staged whose Publish is that PutIfAbsent.
func Stage(o ObjectStore, name string, data []byte, b *SyncBatch) (Staged, error) {
	if w, ok := o.(BatchWriter); ok && b != nil {
		return w.Stage(name, data, b)
	}
	return putLater{o: o, name: name, data: data}, nil
}

type putLater struct {
	o    ObjectStore
	name string
	data []byte
}

func (p putLater) Publish(afterLink func()) error {
	err := p.o.PutIfAbsent(p.name, p.data)
	if afterLink != nil && (err == nil || errors.Is(err, ErrNotDurable)) {
		afterLink()
	}
	return err
}
func (p putLater) Link() error { return p.Publish(nil) }
func (p putLater) Discard()    {}

var _ BatchWriter = LocalObjects{}

// WriteDeferred implements BatchWriter: the file is created under its
// final name (exclusively) and written; its sync and its directory's are
// left to b.
func (l LocalObjects) WriteDeferred(name string, data []byte, b *SyncBatch) error {
	if err := WriteNewFileDeferred(l.FS, name, data, b); err != nil {
		return fmt.Errorf("put %s: %w", name, err)
	}
	return nil
}

// Stage implements BatchWriter: the PutIfAbsent protocol with the
// temporary file's sync left to b; Publish links it, removes the
// temporary name and syncs the directory. The temporary name's own entry
// need not be durable, so its directory is not added to b.
func (l LocalObjects) Stage(name string, data []byte, b *SyncBatch) (Staged, error) {
	p, err := l.PrepareStage(path.Dir(name))
	if err != nil {
		return nil, fmt.Errorf("put %s: %w", name, err)
	}
	return p.Stage(name, data, b)
}

type localStaged struct {
	fsys      FS
	name, tmp string
}

func (s *localStaged) Publish(afterLink func()) error {
	if err := s.Link(); err != nil {
		return err
	}
	return syncAfterLink(s.fsys, s.name, afterLink)
}

func (s *localStaged) Link() error {
	linkErr := s.fsys.Link(s.tmp, s.name)
	_ = s.fsys.Remove(s.tmp) // the staged name is garbage either way
	if linkErr != nil {
		return fmt.Errorf("put %s: %w", s.name, linkErr)
	}
	return nil
}

// syncAfterLink makes the just linked name durable (its directory synced)
// while afterLink, if any, runs; a failure is ErrNotDurable.
func syncAfterLink(fsys FS, name string, afterLink func()) error {
	dir := path.Dir(name)
	var wg sync.WaitGroup
	if afterLink != nil {
		wg.Go(afterLink)
	}
	err := fsys.SyncDir(dir)
	wg.Wait()
	if err != nil {
		return fmt.Errorf("%w: %s is visible but syncing %s failed: %w", ErrNotDurable, name, dir, err)
	}
	return nil
}

func (s *localStaged) Discard() { _ = s.fsys.Remove(s.tmp) }

// TreeSizer is a store that sums the sizes of every object under a
// prefix from its listing (S3: ListObjectsV2 without a delimiter, one
// request per 1,000 objects), where walking with ReadDir and Stat costs a
// request per object.
type TreeSizer interface {
	// TreeBytes is the total size of the objects under dir + "/"; a
	// prefix with nothing under it wraps fs.ErrNotExist.
	TreeBytes(dir string) (int64, error)
}
