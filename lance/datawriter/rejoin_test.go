package datawriter

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestRejoin checks that consecutive slices of one array are joined
// without a copy (same buffers, right offset, length and null count) and
// that anything else is left to Concatenate.
func TestRejoin(t *testing.T) {
	mem := memory.DefaultAllocator
	sb := array.NewStringBuilder(mem)
	for i := range 100 {
		if i%4 == 1 {
			sb.AppendNull()
		} else {
			sb.Append(string(rune('a' + i%26)))
		}
	}
	s := sb.NewArray()
	defer s.Release()
	other := sb.NewArray() // empty: a different array
	defer other.Release()
	slice := func(a arrow.Array, lo, hi int64) arrow.Array { return array.NewSlice(a, lo, hi) }
	parts := []arrow.Array{slice(s, 3, 10), slice(s, 10, 11), slice(s, 11, 60)}
	j := rejoin(parts)
	if j == nil {
		t.Fatal("consecutive slices were not rejoined")
	}
	defer j.Release()
	want := slice(s, 3, 60)
	defer want.Release()
	if j.Data().Offset() != 3 || j.Len() != 57 || j.NullN() != want.NullN() || j.Data().Buffers()[2] != s.Data().Buffers()[2] {
		t.Fatalf("rejoined offset %d len %d nulls %d (want 3, 57, %d), same data buffer %v",
			j.Data().Offset(), j.Len(), j.NullN(), want.NullN(), j.Data().Buffers()[2] == s.Data().Buffers()[2])
	}
	if !array.Equal(j, want) {
		t.Fatalf("rejoined %v, want %v", j, want)
	}
	for name, ps := range map[string][]arrow.Array{
		"gap":           {slice(s, 0, 10), slice(s, 11, 20)},
		"overlap":       {slice(s, 0, 10), slice(s, 9, 20)},
		"out of order":  {slice(s, 10, 20), slice(s, 0, 10)},
		"other buffers": {slice(s, 0, 0), slice(other, 0, 0)},
	} {
		if j := rejoin(ps); j != nil {
			t.Errorf("%s: rejoined into %v", name, j)
			j.Release()
		}
	}
	lb := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int32)
	for i := range 10 {
		lb.Append(true)
		lb.ValueBuilder().(*array.Int32Builder).Append(int32(i))
	}
	l := lb.NewArray()
	defer l.Release()
	if j := rejoin([]arrow.Array{slice(l, 0, 5), slice(l, 5, 10)}); j != nil {
		t.Error("a list (child data) was rejoined")
		j.Release()
	}
}
