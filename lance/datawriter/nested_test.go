package datawriter_test

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datafile"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// nestedSchema nests lists and structs the ways views over real tables
// do: list<struct>, struct<list>, list<list>, with nulls and empties at
// every layer, and not-nullable variants.
func nestedSchema() *arrow.Schema {
	item := arrow.StructOf(
		arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
	)
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "ls", Type: arrow.ListOfField(arrow.Field{Name: "item", Type: item, Nullable: true}), Nullable: true},
		{Name: "sl", Type: arrow.StructOf(
			arrow.Field{Name: "x", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
			arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		), Nullable: true},
		{Name: "ll", Type: arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int32)), Nullable: true},
		{Name: "lls", Type: arrow.ListOfNonNullable(arrow.ListOf(arrow.BinaryTypes.String))},
		{Name: "lsl", Type: arrow.ListOf(arrow.StructOf(
			arrow.Field{Name: "k", Type: arrow.BinaryTypes.String},
			arrow.Field{Name: "v", Type: arrow.ListOf(arrow.FixedWidthTypes.Boolean), Nullable: true},
		)), Nullable: true},
	}, nil)
}

// nestedRecord builds n rows from id start; structNulls adds null structs.
func nestedRecord(s *arrow.Schema, start, n int, structNulls bool) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	defer b.Release()
	for i := start; i < start+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))

		ls := b.Field(1).(*array.ListBuilder)
		switch {
		case i%7 == 3:
			ls.AppendNull()
		case i%5 == 2:
			ls.AppendEmptyValue()
		default:
			ls.Append(true)
			sb := ls.ValueBuilder().(*array.StructBuilder)
			for j := 0; j < i%4+1; j++ {
				if structNulls && (i+j)%6 == 0 {
					sb.AppendNull()
					continue
				}
				sb.Append(true)
				if (i+j)%4 == 1 {
					sb.FieldBuilder(0).AppendNull()
				} else {
					sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(i*10 + j))
				}
				if (i+j)%5 == 3 {
					sb.FieldBuilder(1).AppendNull()
				} else {
					sb.FieldBuilder(1).(*array.StringBuilder).Append(fmt.Sprintf("b%d.%d", i, j))
				}
			}
		}

		sl := b.Field(2).(*array.StructBuilder)
		if structNulls && i%9 == 4 {
			sl.AppendNull()
		} else {
			sl.Append(true)
			xb := sl.FieldBuilder(0).(*array.ListBuilder)
			switch {
			case i%4 == 1:
				xb.AppendNull()
			case i%6 == 0:
				xb.AppendEmptyValue()
			default:
				xb.Append(true)
				for j := 0; j < i%3+1; j++ {
					if (i+j)%5 == 0 {
						xb.ValueBuilder().AppendNull()
					} else {
						xb.ValueBuilder().(*array.Int64Builder).Append(int64(i)*1_000_000_007 + int64(j))
					}
				}
			}
			if i%3 == 2 {
				sl.FieldBuilder(1).AppendNull()
			} else {
				sl.FieldBuilder(1).(*array.Int32Builder).Append(int32(-i))
			}
		}

		ll := b.Field(3).(*array.ListBuilder)
		switch {
		case i%8 == 5:
			ll.AppendNull()
		case i%10 == 0:
			ll.AppendEmptyValue()
		default:
			ll.Append(true)
			inner := ll.ValueBuilder().(*array.ListBuilder)
			for j := 0; j < i%4+1; j++ {
				switch {
				case (i+j)%7 == 2:
					inner.AppendNull()
				case (i+j)%5 == 0:
					inner.AppendEmptyValue()
				default:
					inner.Append(true)
					for m := 0; m < (i+j)%3+1; m++ {
						if (i+j+m)%4 == 3 {
							inner.ValueBuilder().AppendNull()
						} else {
							inner.ValueBuilder().(*array.Int32Builder).Append(int32(i*100 + j*10 + m))
						}
					}
				}
			}
		}

		lls := b.Field(4).(*array.ListBuilder)
		lls.Append(true)
		inner := lls.ValueBuilder().(*array.ListBuilder)
		for j := 0; j < i%3; j++ {
			inner.Append(true)
			for m := 0; m < (i+j)%3; m++ {
				inner.ValueBuilder().(*array.StringBuilder).Append(fmt.Sprintf("s%d", i+j+m))
			}
		}

		lsl := b.Field(5).(*array.ListBuilder)
		if i%11 == 6 {
			lsl.AppendNull()
		} else {
			lsl.Append(true)
			sb := lsl.ValueBuilder().(*array.StructBuilder)
			for j := 0; j < i%3; j++ {
				sb.Append(true)
				sb.FieldBuilder(0).(*array.StringBuilder).Append(fmt.Sprint("k", j))
				vb := sb.FieldBuilder(1).(*array.ListBuilder)
				switch {
				case (i+j)%4 == 0:
					vb.AppendNull()
				case (i+j)%4 == 1:
					vb.AppendEmptyValue()
				default:
					vb.Append(true)
					for m := 0; m < (i+j)%5; m++ {
						vb.ValueBuilder().(*array.BooleanBuilder).Append((i+m)%2 == 0)
					}
				}
			}
		}
	}
	return b.NewRecordBatch()
}

// readBackGo reads every field of the one data file in df with mvd's
// reader and compares each value with rec's.
func readBackGo(t *testing.T, root string, schema *lance.Schema, df lance.DataFile, rec arrow.RecordBatch) {
	t.Helper()
	f, err := vfs.OS().Open(path.Join(root, "data", df.Path))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := datafile.Open(f, f.Size(), df.Path)
	if err != nil {
		t.Fatal(err)
	}
	n := uint64(rec.NumRows())
	if rd.NumRows() != n {
		t.Fatalf("reader sees %d rows, wrote %d", rd.NumRows(), n)
	}
	for i, field := range schema.Fields {
		dt, _ := field.ArrowType()
		got, err := rd.ReadField(context.Background(), field.ID, dt, 0, n, memory.DefaultAllocator)
		if err != nil {
			t.Errorf("field %q: %v", field.Name, err)
			continue
		}
		bad := 0
		for r := 0; r < int(n); r++ {
			g, _ := datafile.AppendJSON(nil, got, r)
			w, _ := datafile.AppendJSON(nil, rec.Column(i), r)
			if !bytes.Equal(g, w) {
				if bad++; bad <= 2 {
					t.Errorf("field %q row %d: read %s, wrote %s", field.Name, r, g, w)
				}
			}
		}
	}
}

// roundTripGo writes rec as one data file in version and reads every
// value back with mvd's reader (readBackGo).
func roundTripGo(t *testing.T, version lance.FileVersion, rec arrow.RecordBatch) {
	t.Helper()
	schema, err := lance.NewSchemaFromArrow(rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "t.lance")
	df, _, err := datawriter.WriteFile(vfs.OS(), root, schema, version, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	readBackGo(t, root, schema, df, rec)
}

// TestNestedRoundTrip reads nested lists and structs back with mvd's
// reader, in every version, across several mini-block chunks.
func TestNestedRoundTrip(t *testing.T) {
	for _, version := range []lance.FileVersion{"2.2", "2.1", "2.0"} {
		t.Run(string(version), func(t *testing.T) {
			sn := version != "2.0" // 2.0 cannot store null structs
			roundTripGo(t, version, nestedRecord(nestedSchema(), 0, 3000, sn))
		})
	}
}

// TestNestedInterop checks that LanceDB reads every nested value back.
func TestNestedInterop(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	for _, version := range []lance.FileVersion{"2.2", "2.1", "2.0"} {
		t.Run(string(version), func(t *testing.T) {
			t.Parallel()
			as := nestedSchema()
			sn := version != "2.0" // 2.0 cannot store null structs
			recs := []arrow.RecordBatch{nestedRecord(as, 0, 3000, sn), nestedRecord(as, 3000, 500, sn)}
			checkLanceDBReads(t, createTable(t, version, recs...), recs...)
		})
	}
}
