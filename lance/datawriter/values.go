package datawriter

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// appendFixed appends the little-endian bytes of slots [lo, hi) of a
// fixed-width leaf to dst, with null slots zeroed (their bytes in Arrow
// are unspecified).
func appendFixed(dst []byte, l *leaf, lo, hi int) []byte {
	width := l.bits / 8
	start := len(dst)
	n := (hi - lo) * width
	dst = slices.Grow(dst, n)[:start+n]
	out := dst[start:]
	data := l.vals.Data()
	bufs := data.Buffers()
	if len(bufs) < 2 || bufs[1] == nil {
		clear(out)
		return dst
	}
	raw := bufs[1].Bytes()
	off := data.Offset()
	if l.idx == nil {
		begin := (off + lo) * width
		copy(out, raw[begin:begin+n])
	} else {
		for s := lo; s < hi; s++ {
			i := (off + l.idx[s]) * width
			copy(out[(s-lo)*width:], raw[i:i+width])
		}
	}
	if l.null != nil {
		for s := lo; s < hi; s++ {
			if l.null[s] {
				clear(out[(s-lo)*width : (s-lo+1)*width])
			}
		}
	}
	return dst
}

// appendBools appends slots [lo, hi) of a boolean leaf to dst, packed LSB
// first; null slots are false.
func appendBools(dst []byte, l *leaf, lo, hi int) []byte {
	a := l.vals.(*array.Boolean)
	start := len(dst)
	n := (hi - lo + 7) / 8
	dst = slices.Grow(dst, n)[:start+n]
	out := dst[start:]
	clear(out)
	for s := lo; s < hi; s++ {
		if l.visible(s) && a.Value(l.index(s)) {
			i := s - lo
			out[i/8] |= 1 << (i % 8)
		}
	}
	return dst
}

// valueBytes returns the bytes of slot s of a string or binary leaf.
func valueBytes(l *leaf, s int) []byte { return rowBytes(l.vals, l.index(s)) }

// variableLen returns the byte length of slot s (0 when null).
func variableLen(l *leaf, s int) int {
	if !l.visible(s) {
		return 0
	}
	r := l.index(s)
	switch v := l.vals.(type) {
	case *array.String:
		return v.ValueLen(r)
	case *array.LargeString:
		return v.ValueLen(r)
	case *array.Binary:
		return v.ValueLen(r)
	case *array.LargeBinary:
		return v.ValueLen(r)
	}
	return 0
}
