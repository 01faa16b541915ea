package datafile

import "fmt"

// bufSource gives a page's buffers, whole or in part, so decoders read only
// what they use.
type bufSource interface {
	count() int
	size(i int) uint64
	all(i int) ([]byte, error)
	part(i int, off, n uint64) ([]byte, error)
}

// memBufs is a bufSource over buffers already in memory.
type memBufs [][]byte

func (m memBufs) count() int { return len(m) }

func (m memBufs) size(i int) uint64 { return uint64(len(m[i])) }

func (m memBufs) all(i int) ([]byte, error) { return m[i], nil }

func (m memBufs) part(i int, off, n uint64) ([]byte, error) {
	if off > uint64(len(m[i])) || n > uint64(len(m[i]))-off {
		return nil, fmt.Errorf("buffer %d range %d+%d is past its %d bytes", i, off, n, len(m[i]))
	}
	return m[i][off : off+n], nil
}

// fileBufs is a bufSource reading a page's buffers from the file.
type fileBufs struct {
	r     *Reader
	spans []span
}

func (f fileBufs) count() int { return len(f.spans) }

func (f fileBufs) size(i int) uint64 { return f.spans[i].size }

func (f fileBufs) all(i int) ([]byte, error) {
	b, err := f.r.readSpan(f.spans[i])
	if err != nil {
		return nil, fmt.Errorf("read buffer %d: %w", i, err)
	}
	return b, nil
}

func (f fileBufs) part(i int, off, n uint64) ([]byte, error) {
	s := f.spans[i]
	if off > s.size || n > s.size-off {
		return nil, fmt.Errorf("buffer %d range %d+%d is past its %d bytes", i, off, n, s.size)
	}
	b, err := f.r.readSpan(span{s.pos + off, n})
	if err != nil {
		return nil, fmt.Errorf("read buffer %d: %w", i, err)
	}
	return b, nil
}

// allBufs reads every buffer of src.
func allBufs(src bufSource) ([][]byte, error) {
	out := make([][]byte, src.count())
	for i := range out {
		b, err := src.all(i)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}
