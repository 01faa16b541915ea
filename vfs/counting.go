package vfs

import "sync/atomic"

// CountingFS wraps an FS and counts the files opened and bytes read through
// it. Benchmarks and tests use it to prove what an operation did not read.
type CountingFS struct {
	FS
	opens     atomic.Int64
	bytesRead atomic.Int64
	reads     atomic.Int64
	openHook  func(name string)
}

// NewCountingFS returns a CountingFS over inner. onOpen, if not nil, is
// called with the name of every file opened (for example to fail a test
// that touches a data file).
func NewCountingFS(inner FS, onOpen func(name string)) *CountingFS {
	return &CountingFS{FS: inner, openHook: onOpen}
}

// Open implements FS.
func (c *CountingFS) Open(name string) (File, error) {
	if c.openHook != nil {
		c.openHook(name)
	}
	f, err := c.FS.Open(name)
	if err != nil {
		return nil, err
	}
	c.opens.Add(1)
	return &countingFile{File: f, c: c}, nil
}

// Opens returns how many files were opened.
func (c *CountingFS) Opens() int64 { return c.opens.Load() }

// BytesRead returns how many bytes were read.
func (c *CountingFS) BytesRead() int64 { return c.bytesRead.Load() }

// Reads returns how many ReadAt calls were made.
func (c *CountingFS) Reads() int64 { return c.reads.Load() }

// Reset zeroes the counters.
func (c *CountingFS) Reset() {
	c.opens.Store(0)
	c.bytesRead.Store(0)
	c.reads.Store(0)
}

type countingFile struct {
	File
	c *CountingFS
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.c.bytesRead.Add(int64(n))
	f.c.reads.Add(1)
	return n, err
}
