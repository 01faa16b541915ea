package datawriter

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
)

// countingWriter records each write it is given.
type countingWriter struct {
	bytes.Buffer
	writes []int
	failAt int // the write (1-based) that fails; 0: none
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes = append(c.writes, len(p))
	if len(c.writes) == c.failAt {
		return 0, errors.New("disk full")
	}
	return c.Buffer.Write(p)
}

func TestGrowWriter(t *testing.T) {
	const max = 64
	for _, c := range []struct {
		name   string
		writes []int // sizes written, in order
		want   []int // the writes w is given, flush included
		maxCap int   // the buffer's capacity at most
	}{
		{"nothing", nil, nil, 0},
		{"small stays small", []int{10, 20}, []int{30}, max},
		{"fills exactly", []int{32, 32}, []int{64}, max},
		{"overflow flushes first", []int{40, 40}, []int{40, 40}, max},
		{"large goes direct", []int{10, 100, 5}, []int{10, 100, 5}, max},
		{"large on empty buffer", []int{64, 1}, []int{64, 1}, max},
	} {
		t.Run(c.name, func(t *testing.T) {
			var w countingWriter
			g := newGrowWriter(&w, max)
			var want []byte
			for i, n := range c.writes {
				p := bytes.Repeat([]byte{byte('a' + i)}, n)
				want = append(want, p...)
				if got, err := g.Write(p); err != nil || got != n {
					t.Fatalf("Write(%d bytes) = %d, %v", n, got, err)
				}
				if cap(g.buf) > c.maxCap && c.maxCap > 0 {
					t.Fatalf("buffer grew to %d, more than %d", cap(g.buf), c.maxCap)
				}
			}
			if err := g.Flush(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(w.Bytes(), want) {
				t.Fatalf("wrote %q, want %q", w.Bytes(), want)
			}
			if !slices.Equal(w.writes, c.want) {
				t.Fatalf("writes %v, want %v", w.writes, c.want)
			}
		})
	}
}

func TestGrowWriterSmallBufferForSmallFile(t *testing.T) {
	g := newGrowWriter(io.Discard, dataFileBuffer)
	if _, err := g.Write(make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	if cap(g.buf) > minGrowBuffer {
		t.Fatalf("a 100-byte write took a %d-byte buffer", cap(g.buf))
	}
}

func TestGrowWriterErrorSticks(t *testing.T) {
	w := countingWriter{failAt: 1}
	g := newGrowWriter(&w, 8)
	if _, err := g.Write([]byte("abc")); err != nil {
		t.Fatal(err) // buffered
	}
	if err := g.Flush(); err == nil {
		t.Fatal("a failed flush returned nil")
	}
	if _, err := g.Write([]byte("d")); err == nil {
		t.Fatal("a write after a failure returned nil")
	}
	if err := g.Flush(); err == nil {
		t.Fatal("a flush after a failure returned nil")
	}
	if len(w.writes) != 1 {
		t.Fatalf("w was given %d writes after the failure, want none", len(w.writes)-1)
	}
}
