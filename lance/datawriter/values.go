package datawriter

import (
	"github.com/apache/arrow-go/v18/arrow/array"
)

// fixedBytes returns the little-endian bytes of slots [lo, hi) of a
// fixed-width leaf, with null slots zeroed (their bytes in Arrow are
// unspecified).
func fixedBytes(l *leaf, lo, hi int) []byte {
	width := l.bits / 8
	out := make([]byte, (hi-lo)*width)
	data := l.vals.Data()
	bufs := data.Buffers()
	if len(bufs) < 2 || bufs[1] == nil {
		return out
	}
	raw := bufs[1].Bytes()
	off := data.Offset()
	if l.idx == nil {
		start := (off + lo) * width
		copy(out, raw[start:start+(hi-lo)*width])
	} else {
		for s := lo; s < hi; s++ {
			i := (off + l.idx[s]) * width
			copy(out[(s-lo)*width:], raw[i:i+width])
		}
	}
	for s := lo; s < hi; s++ {
		if !l.visible(s) {
			clear(out[(s-lo)*width : (s-lo+1)*width])
		}
	}
	return out
}

// boolBits packs slots [lo, hi) of a boolean leaf LSB first; null slots
// are false.
func boolBits(l *leaf, lo, hi int) []byte {
	a := l.vals.(*array.Boolean)
	out := make([]byte, (hi-lo+7)/8)
	for s := lo; s < hi; s++ {
		if l.visible(s) && a.Value(l.index(s)) {
			i := s - lo
			out[i/8] |= 1 << (i % 8)
		}
	}
	return out
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
