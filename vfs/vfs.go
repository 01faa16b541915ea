// Package vfs is the filesystem seam under every file mvd reads or writes.
//
// Everything in mvd that touches storage goes through an FS, so tests can
// inject faults (see package vfs/errorfs), benchmarks can count bytes read
// (CountingFS), and an object store can be added later without touching the
// callers: what commits write goes through ObjectStore (see Objects), whose
// PutIfAbsent is a conditional PUT on an object store and temp + fsync +
// link + directory fsync on a local disk. Paths are slash-separated and
// interpreted by the FS.
package vfs

import (
	"io"
	"io/fs"
)

// File is an open file that can be read at arbitrary offsets.
//
// Implementations must allow concurrent ReadAt calls from several
// goroutines; Close must be called exactly once.
type File interface {
	io.ReaderAt
	io.Closer
	// Size returns the file's length in bytes as of Open.
	Size() int64
}

// WritableFile is a file being written. Data is durable only after Sync
// returns nil; a Sync error is fatal to the operation (the file's contents
// are then unknown and must not be published).
type WritableFile interface {
	io.Writer
	io.Closer
	Sync() error
}

// FS is a filesystem. All methods are safe for concurrent use.
type FS interface {
	// Open opens name for reading.
	Open(name string) (File, error)
	// Create creates name for writing, failing with fs.ErrExist if it exists.
	Create(name string) (WritableFile, error)
	// Link makes newname refer to oldname's file, failing with fs.ErrExist
	// if newname exists. LocalObjects.PutIfAbsent builds on it; callers
	// publish through ObjectStore, not Link.
	Link(oldname, newname string) error
	// Rename atomically replaces newname with oldname.
	Rename(oldname, newname string) error
	// Remove removes a file or an empty directory.
	Remove(name string) error
	// MkdirAll creates a directory and its parents.
	MkdirAll(dir string) error
	// ReadDir lists the names of the entries of dir, in no particular order.
	ReadDir(dir string) ([]string, error)
	// Stat describes name.
	Stat(name string) (fs.FileInfo, error)
	// SyncDir makes the entries of dir (creations, links, renames) durable.
	SyncDir(dir string) error
}

// ReadFile reads the whole of name (one ReadWhole on a WholeReader).
func ReadFile(fsys FS, name string) ([]byte, error) {
	if w, ok := fsys.(WholeReader); ok {
		return w.ReadWhole(name)
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f)
}

// ReadAll reads the whole of an open file.
func ReadAll(f File) ([]byte, error) {
	buf := make([]byte, f.Size())
	if _, err := f.ReadAt(buf, 0); err != nil && err != io.EOF {
		return nil, err
	}
	return buf, nil
}
