package datawriter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// allTypesSchema covers every type the writer handles, nullable and not.
func allTypesSchema() *arrow.Schema {
	md := arrow.NewMetadata([]string{"k"}, []string{"v"})
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true, Metadata: md},
		{Name: "u8", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
		{Name: "u16", Type: arrow.PrimitiveTypes.Uint16},
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "f16", Type: arrow.FixedWidthTypes.Float16, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ls", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "lbin", Type: arrow.BinaryTypes.LargeBinary, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "tsz", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "vec", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "vec8", Type: arrow.FixedSizeListOf(8, arrow.PrimitiveTypes.Float64), Nullable: true},
		{Name: "st", Type: arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
		), Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "nums", Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Int32)},
		{Name: "uuid", Type: &arrow.FixedSizeBinaryType{ByteWidth: 16}, Nullable: true},
		{Name: "d64", Type: arrow.FixedWidthTypes.Date64, Nullable: true},
	}, &md)
}

// allTypesRecord builds n rows from id start with nulls sprinkled in,
// strings from empty to several KiB (to force small string chunks).
func allTypesRecord(s *arrow.Schema, start, n int, structNulls bool) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	defer b.Release()
	for i := start; i < start+n; i++ {
		null := func(k int) bool { return i%k == 3 }
		b.Field(0).(*array.Int64Builder).Append(int64(i) * 1_000_003)
		app := func(col int, k int, fn func()) {
			if null(k) {
				b.Field(col).AppendNull()
			} else {
				fn()
			}
		}
		app(1, 7, func() { b.Field(1).(*array.Int8Builder).Append(int8(i)) })
		app(2, 11, func() { b.Field(2).(*array.Int16Builder).Append(int16(i * 7)) })
		app(3, 5, func() { b.Field(3).(*array.Int32Builder).Append(int32(i*31 - 5000)) })
		app(4, 13, func() { b.Field(4).(*array.Uint8Builder).Append(uint8(i)) })
		b.Field(5).(*array.Uint16Builder).Append(uint16(i))
		app(6, 17, func() { b.Field(6).(*array.Uint32Builder).Append(uint32(i) * 4_000_037) })
		app(7, 19, func() { b.Field(7).(*array.Uint64Builder).Append(uint64(i) * 18_000_000_000_000_011) })
		app(8, 23, func() { b.Field(8).(*array.Float16Builder).Append(float16.New(float32(i) / 8)) })
		app(9, 29, func() { b.Field(9).(*array.Float32Builder).Append(float32(i) / 3) })
		app(10, 31, func() { b.Field(10).(*array.Float64Builder).Append(float64(i) / 7) })
		app(11, 9, func() { b.Field(11).(*array.BooleanBuilder).Append(i%3 == 0) })
		str := "s" + strings.Repeat("x", i%37) + "é"
		if i%500 == 7 {
			str = strings.Repeat("long ", 1200) // 6 KB
		}
		app(12, 10, func() { b.Field(12).(*array.StringBuilder).Append(str) })
		app(13, 8, func() {
			b.Field(13).(*array.LargeStringBuilder).Append("L" + strings.ToValidUTF8(str[:min(len(str), 20)], ""))
		})
		app(14, 6, func() { b.Field(14).(*array.BinaryBuilder).Append([]byte{byte(i), 0, byte(i >> 8)}) })
		app(15, 12, func() { b.Field(15).(*array.BinaryBuilder).Append([]byte(str[:min(3, len(str))])) })
		app(16, 14, func() { b.Field(16).(*array.Date32Builder).Append(arrow.Date32(18000 + i)) })
		app(17, 15, func() {
			b.Field(17).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000_000 + int64(i)*1_000_001))
		})
		app(18, 16, func() { b.Field(18).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000 + int64(i))) })
		app(19, 4, func() {
			fb := b.Field(19).(*array.FixedSizeListBuilder)
			fb.Append(true)
			vb := fb.ValueBuilder().(*array.Float32Builder)
			for j := 0; j < 4; j++ {
				vb.Append(float32(i) + float32(j)/4)
			}
		})
		fb8 := b.Field(20).(*array.FixedSizeListBuilder)
		if null(6) {
			fb8.AppendNull()
		} else {
			fb8.Append(true)
			vb := fb8.ValueBuilder().(*array.Float64Builder)
			for j := 0; j < 8; j++ {
				if (i+j)%11 == 0 {
					vb.AppendNull()
				} else {
					vb.Append(float64(i) * float64(j))
				}
			}
		}
		sb := b.Field(21).(*array.StructBuilder)
		if structNulls && null(21) {
			sb.AppendNull()
		} else {
			sb.Append(true)
			if i%5 == 1 {
				sb.FieldBuilder(0).AppendNull()
			} else {
				sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(-i))
			}
			if i%6 == 1 {
				sb.FieldBuilder(1).AppendNull()
			} else {
				sb.FieldBuilder(1).(*array.StringBuilder).Append("b" + strings.ToValidUTF8(str[:min(len(str), 5)], ""))
			}
		}
		tb := b.Field(22).(*array.ListBuilder)
		switch {
		case i%11 == 3:
			tb.AppendNull()
		case i%13 == 5:
			tb.AppendEmptyValue()
		default:
			tb.Append(true)
			for j := 0; j < i%5; j++ {
				if (i+j)%7 == 0 {
					tb.ValueBuilder().AppendNull()
				} else {
					tb.ValueBuilder().(*array.StringBuilder).Append(fmt.Sprintf("t%d-%d", i, j))
				}
			}
		}
		nb := b.Field(23).(*array.ListBuilder)
		nb.Append(true)
		for j := 0; j < i%40; j++ {
			nb.ValueBuilder().(*array.Int32Builder).Append(int32(i*100 + j))
		}
		app(24, 18, func() {
			u := make([]byte, 16)
			for j := range u {
				u[j] = byte(i*7 + j)
			}
			b.Field(24).(*array.FixedSizeBinaryBuilder).Append(u)
		})
		app(25, 20, func() { b.Field(25).(*array.Date64Builder).Append(arrow.Date64(int64(18000+i) * 86_400_000)) })
	}
	return b.NewRecordBatch()
}

// TestAllTypesInterop writes every supported type in 2.2, 2.1 and 2.0, creates
// a table of it with mvd and checks that LanceDB reads every value back
// equal, with schema and field metadata.
func TestAllTypesInterop(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	for _, version := range []lance.FileVersion{"2.2", "2.1", "2.0"} {
		t.Run(string(version), func(t *testing.T) {
			t.Parallel()
			as := allTypesSchema()
			structNulls := version != "2.0" // 2.0 cannot store null structs
			recs := []arrow.RecordBatch{allTypesRecord(as, 0, 1500, structNulls), allTypesRecord(as, 1500, 600, structNulls)}
			got := checkLanceDBReads(t, createTable(t, version, recs...), recs...)
			if got.SchemaMetadata["k"] != "v" {
				t.Errorf("schema metadata = %v", got.SchemaMetadata)
			}
		})
	}
}

// TestMultiPageInterop writes columns long enough to be split into
// several pages (by rows, and for wide strings by bytes, with two-value
// chunks) and checks that LanceDB reads every value.
func TestMultiPageInterop(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	as := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int32},
		{Name: "doc", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	const rows = 70_000
	for i := 0; i < rows; i++ {
		b.Field(0).(*array.Int32Builder).Append(int32(i))
		switch {
		case i%97 == 0:
			b.Field(1).AppendNull()
		case i < 900:
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("%05d", i) + strings.Repeat("abcdefgh", 1100+i%50))
		default:
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprint(i % 1000))
		}
	}
	rec := b.NewRecordBatch()
	b.Release()
	schema, err := lance.NewSchemaFromArrow(as)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "pages.lance")
	frags, err := datawriter.WriteFragments(vfs.OS(), root, schema, "2.2", []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := lance.Create(context.Background(), vfs.OS(), root, lance.CreateOptions{Schema: schema, Fragments: frags}); err != nil {
		t.Fatal(err)
	}
	// The head (wide strings), both sides of the page boundary and the
	// tail, read back in scan order.
	for _, at := range []int{0, 850, rows/2 - 40, rows - 60} {
		out := lancedbtest.RunNode(t, "interop.mjs", "slice", root, fmt.Sprint(at), "80")
		var got lanceDBTable
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		n := min(80, rows-at)
		if got.NumRows != rows || len(got.Data) != n {
			t.Fatalf("LanceDB counts %d rows and returns %d from %d", got.NumRows, len(got.Data), at)
		}
		checkValues(t, rec.NewSlice(int64(at), int64(at+n)), 0, got.Data)
	}
}
