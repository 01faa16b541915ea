package datawriter_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// TestStreamedSlicesRoundTrip writes a fragment the way a refresh does:
// batches that are consecutive slices of the same decoded columns (joined
// without a copy), batches with gaps between them and batches of their
// own buffers (joined by copying), over more than one page per column and
// across chunk edges, with nulls at odd bit offsets; every value is read
// back.
func TestStreamedSlicesRoundTrip(t *testing.T) {
	as := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ls", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float32},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int16), Nullable: true},
		{Name: "u", Type: arrow.PrimitiveTypes.Uint64},
	}, nil)
	schema, err := lance.NewSchemaFromArrow(as)
	if err != nil {
		t.Fatal(err)
	}
	const n = 150_001 // three pages of at most 64Ki rows
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	for i := range n {
		if i%7 == 3 {
			b.Field(0).AppendNull()
			b.Field(1).AppendNull()
			b.Field(2).AppendNull()
			b.Field(3).AppendNull()
			b.Field(5).AppendNull()
		} else {
			b.Field(0).(*array.Int64Builder).Append(int64(i) * 1_000_003)
			b.Field(1).(*array.BooleanBuilder).Append(i%3 == 0)
			b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("s%d", i%977))
			b.Field(3).(*array.LargeStringBuilder).Append(fmt.Sprintf("large-%d", i))
			lb := b.Field(5).(*array.ListBuilder)
			lb.Append(true)
			for j := range i % 3 {
				lb.ValueBuilder().(*array.Int16Builder).Append(int16(i + j))
			}
		}
		b.Field(4).(*array.Float32Builder).Append(float32(i) / 4)
		b.Field(6).(*array.Uint64Builder).Append(uint64(i))
	}
	full := b.NewRecordBatch()
	defer full.Release()
	for _, c := range []struct {
		name string
		cut  func() []arrow.RecordBatch
		want func() arrow.RecordBatch
	}{
		{"consecutive slices", func() []arrow.RecordBatch {
			var recs []arrow.RecordBatch
			for lo := int64(1); lo < n; lo += 8191 { // odd offsets: bits not byte-aligned
				recs = append(recs, full.NewSlice(lo, min(n, lo+8191)))
			}
			return recs
		}, func() arrow.RecordBatch { return full.NewSlice(1, n) }},
		{"slices with gaps", func() []arrow.RecordBatch {
			var recs []arrow.RecordBatch
			for lo := int64(0); lo+3000 <= n; lo += 3001 {
				recs = append(recs, full.NewSlice(lo, lo+3000)) // skips a row after each
			}
			return recs
		}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			recs := c.cut()
			defer func() {
				for _, r := range recs {
					r.Release()
				}
			}()
			var want arrow.RecordBatch
			if c.want != nil {
				want = c.want()
			} else {
				want = concatTable(t, as, recs)
			}
			defer want.Release()
			root := filepath.Join(t.TempDir(), "t.lance")
			w := datawriter.NewFragmentWriter(vfs.OS(), root, schema, "2.2")
			for _, r := range recs {
				if err := w.Write(r); err != nil {
					t.Fatal(err)
				}
			}
			frags, err := w.Finish()
			if err != nil || len(frags) != 1 {
				t.Fatalf("fragments %+v, %v", frags, err)
			}
			readBackGo(t, root, schema, frags[0].Files[0], want)
		})
	}
}

// concatTable joins recs into one batch (by copying).
func concatTable(t *testing.T, as *arrow.Schema, recs []arrow.RecordBatch) arrow.RecordBatch {
	t.Helper()
	cols := make([]arrow.Array, as.NumFields())
	rows := int64(0)
	for i := range cols {
		parts := make([]arrow.Array, len(recs))
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		cols[i] = c
		rows = int64(c.Len())
	}
	rec := array.NewRecordBatch(as, cols, rows)
	for _, c := range cols {
		c.Release()
	}
	return rec
}
