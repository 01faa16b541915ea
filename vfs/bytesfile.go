package vfs

import (
	"io"
	"io/fs"
)

// BytesFile is a File over bytes already in memory: an object read whole
// (one request on an object store) and then read at offsets.
type BytesFile struct {
	data   []byte
	closed bool
}

var _ File = (*BytesFile)(nil)

// NewBytesFile returns a File reading data.
func NewBytesFile(data []byte) *BytesFile { return &BytesFile{data: data} }

// ReadAt implements io.ReaderAt.
func (b *BytesFile) ReadAt(p []byte, off int64) (int, error) {
	if b.closed {
		return 0, fs.ErrClosed
	}
	if off < 0 {
		return 0, fs.ErrInvalid
	}
	if off >= int64(len(b.data)) {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(p, b.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Size implements File.
func (b *BytesFile) Size() int64 { return int64(len(b.data)) }

// Close implements io.Closer; reads after it fail with fs.ErrClosed.
func (b *BytesFile) Close() error { b.closed = true; return nil }
