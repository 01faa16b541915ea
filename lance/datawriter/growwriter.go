package datawriter

import "io"

// growWriter buffers writes to w as a bufio.Writer of size max does, but
// its buffer grows with what it holds, up to max: a refresh's one-row
// data file is written through a few KB, not max (a daemon writes one
// such file per view per source commit).
type growWriter struct {
	w   io.Writer
	buf []byte
	max int
	err error // sticky: after a failed write nothing more is written
}

// minGrowBuffer is the first buffer a growWriter allocates.
const minGrowBuffer = 4 << 10

// newGrowWriter buffers writes to w, in a buffer of at most limit bytes.
func newGrowWriter(w io.Writer, limit int) *growWriter { return &growWriter{w: w, max: limit} }

// Write buffers p, flushing first if p does not fit; a p of max bytes or
// more goes to w directly.
func (g *growWriter) Write(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if len(g.buf)+len(p) > g.max {
		if err := g.Flush(); err != nil {
			return 0, err
		}
		if len(p) >= g.max {
			n, err := g.w.Write(p)
			if err == nil && n < len(p) {
				err = io.ErrShortWrite
			}
			g.err = err
			return n, err
		}
	}
	if need := len(g.buf) + len(p); need > cap(g.buf) {
		grown := make([]byte, len(g.buf), min(max(2*cap(g.buf), need, minGrowBuffer), g.max))
		copy(grown, g.buf)
		g.buf = grown
	}
	g.buf = append(g.buf, p...)
	return len(p), nil
}

// Flush writes what is buffered to w.
func (g *growWriter) Flush() error {
	if g.err != nil {
		return g.err
	}
	if len(g.buf) == 0 {
		return nil
	}
	n, err := g.w.Write(g.buf)
	if err == nil && n < len(g.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		g.err = err
		return err
	}
	g.buf = g.buf[:0]
	return nil
}
