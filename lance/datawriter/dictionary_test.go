package datawriter_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// dictRecord builds n rows (ids from start) for the schema LanceDB gives a
// table with dictionary columns: color dictionary<int32, utf8> over the
// five items given and a null one, tag dictionary<uint8, binary>, and
// dictionaries in a struct (sd) and a list (ld). Keys are null, or point
// at the null item, now and then; item 3 is unused.
func dictRecord(t *testing.T, as *arrow.Schema, start, n int, items []string) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	colors := array.NewStringBuilder(memory.DefaultAllocator)
	colors.AppendValues(items, nil)
	colors.AppendNull()
	colorItems := colors.NewArray()
	defer colorItems.Release()
	colorKeys := array.NewInt32Builder(memory.DefaultAllocator)
	tagKeys := array.NewUint8Builder(memory.DefaultAllocator)
	tags := array.NewBinaryBuilder(memory.DefaultAllocator, arrow.BinaryTypes.Binary)
	for i := 0; i < 256; i++ {
		tags.Append([]byte(fmt.Sprintf("tag%03d", i)))
	}
	tagItems := tags.NewArray()
	defer tagItems.Release()
	for i := start; i < start+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		switch {
		case i%7 == 3:
			colorKeys.AppendNull()
		case i%11 == 5:
			colorKeys.Append(5) // the null item
		default:
			colorKeys.Append([]int32{0, 1, 2, 4}[i%4])
		}
		if i%9 == 2 {
			tagKeys.AppendNull()
		} else {
			tagKeys.Append(uint8(i * 13 % 250))
		}
		// Nested dictionaries, through Arrow's dictionary builders.
		sb := b.Field(3).(*array.StructBuilder)
		sb.Append(true)
		if i%3 == 1 {
			sb.FieldBuilder(0).AppendNull()
		} else if err := sb.FieldBuilder(0).(*array.BinaryDictionaryBuilder).AppendString(items[i%len(items)]); err != nil {
			t.Fatal(err)
		}
		if i%8 == 5 {
			sb.FieldBuilder(1).AppendNull()
		} else {
			sb.FieldBuilder(1).(*array.Int32Builder).Append(int32(i))
		}
		lb := b.Field(4).(*array.ListBuilder)
		switch i % 6 {
		case 2:
			lb.AppendNull()
		case 3:
			lb.AppendEmptyValue()
		default:
			lb.Append(true)
			for j := 0; j < i%4+1; j++ {
				if (i+j)%5 == 1 {
					lb.ValueBuilder().AppendNull()
				} else if err := lb.ValueBuilder().(*array.BinaryDictionaryBuilder).AppendString(fmt.Sprint("w", (i+j)%7)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	ck, tk := colorKeys.NewArray(), tagKeys.NewArray()
	defer ck.Release()
	defer tk.Release()
	cols := []arrow.Array{
		b.Field(0).NewArray(),
		array.NewDictionaryArray(as.Field(1).Type, ck, colorItems),
		array.NewDictionaryArray(as.Field(2).Type, tk, tagItems),
		b.Field(3).NewArray(),
		b.Field(4).NewArray(),
	}
	return array.NewRecordBatch(as, cols, int64(n))
}

// concatRecords joins record batches into one.
func concatRecords(as *arrow.Schema, recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, as.NumFields())
	n := int64(0)
	for _, r := range recs {
		n += r.NumRows()
	}
	for i := range cols {
		parts := make([]arrow.Array, len(recs))
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	return array.NewRecordBatch(as, cols, n), nil
}

// TestDictionaryInterop appends dictionary-typed columns to a table
// LanceDB created with them, in every version, and checks that LanceDB
// and mvd's reader read every value back.
func TestDictionaryInterop(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	for _, version := range []lance.FileVersion{"2.2", "2.1", "2.0"} {
		t.Run(string(version), func(t *testing.T) {
			t.Parallel()
			root := filepath.Join(t.TempDir(), "dict.lance")
			lancedbtest.RunNode(t, "interop.mjs", "create_dict", root, string(version))
			tbl, err := lance.Open(context.Background(), vfs.OS(), root)
			if err != nil {
				t.Fatal(err)
			}
			m, err := tbl.Checkout(context.Background(), 0)
			if err != nil {
				t.Fatal(err)
			}
			as, err := m.Schema.Arrow()
			if err != nil {
				t.Fatal(err)
			}
			// Two batches with different dictionaries go to one file.
			recs := []arrow.RecordBatch{
				dictRecord(t, as, 10, 3000, []string{"rot", "grün", "", "unused", "blau"}),
				dictRecord(t, as, 3010, 2000, []string{"blau", "gelb", "rot", "unused", ""}),
			}
			frags, err := datawriter.WriteFragments(vfs.OS(), root, m.Schema, m.DataFileVersion, recs)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := concatRecords(as, recs)
			if err != nil {
				t.Fatal(err)
			}
			readBackGo(t, root, m.Schema, frags[0].Files[0], rec)
			if _, err := tbl.Commit(context.Background(), m, &lance.Commit{Fragments: frags}); err != nil {
				t.Fatal(err)
			}
			got := lanceDBRead(t, root)
			if got.NumRows != 5010 {
				t.Fatalf("LanceDB reads %d rows, want 5010", got.NumRows)
			}
			checkValues(t, rec, 10, got.Data)
		})
	}
}
