package datawriter_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// edgeSchema holds fixed-size lists whose item validity does not fill
// whole bytes, a vector inside a struct, and the null type (also in a
// struct and a list).
func edgeSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v3", Type: arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "v12", Type: arrow.FixedSizeListOf(12, arrow.PrimitiveTypes.Int16)},
		{Name: "sv", Type: arrow.StructOf(
			arrow.Field{Name: "v", Type: arrow.FixedSizeListOf(5, arrow.PrimitiveTypes.Float64), Nullable: true},
		), Nullable: true},
		{Name: "nothing", Type: arrow.Null, Nullable: true},
		{Name: "sn", Type: arrow.StructOf(
			arrow.Field{Name: "n", Type: arrow.Null, Nullable: true},
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		), Nullable: true},
		{Name: "ln", Type: arrow.ListOf(arrow.Null), Nullable: true},
	}, nil)
}

func edgeRecord(s *arrow.Schema, start, n int, structNulls bool) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	defer b.Release()
	for i := start; i < start+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		v3 := b.Field(1).(*array.FixedSizeListBuilder)
		if i%6 == 1 {
			v3.AppendNull()
		} else {
			v3.Append(true)
			for j := 0; j < 3; j++ {
				if (i+j)%5 == 0 {
					v3.ValueBuilder().AppendNull()
				} else {
					v3.ValueBuilder().(*array.Float32Builder).Append(float32(i) + float32(j)/8)
				}
			}
		}
		v12 := b.Field(2).(*array.FixedSizeListBuilder)
		v12.Append(true)
		for j := 0; j < 12; j++ {
			if (i*3+j)%13 == 0 {
				v12.ValueBuilder().AppendNull()
			} else {
				v12.ValueBuilder().(*array.Int16Builder).Append(int16(i*12 + j))
			}
		}
		sv := b.Field(3).(*array.StructBuilder)
		if structNulls && i%7 == 2 {
			sv.AppendNull()
		} else {
			sv.Append(true)
			vb := sv.FieldBuilder(0).(*array.FixedSizeListBuilder)
			if i%4 == 3 {
				vb.AppendNull()
			} else {
				vb.Append(true)
				for j := 0; j < 5; j++ {
					vb.ValueBuilder().(*array.Float64Builder).Append(float64(i) * float64(j))
				}
			}
		}
		b.Field(4).AppendNull()
		sn := b.Field(5).(*array.StructBuilder)
		if structNulls && i%4 == 1 {
			sn.AppendNull()
		} else {
			sn.Append(true)
			sn.FieldBuilder(0).AppendNull()
			if i%3 == 0 {
				sn.FieldBuilder(1).AppendNull()
			} else {
				sn.FieldBuilder(1).(*array.Int32Builder).Append(int32(i))
			}
		}
		ln := b.Field(6).(*array.ListBuilder)
		switch i % 5 {
		case 0:
			ln.AppendNull()
		case 1:
			ln.AppendEmptyValue()
		default:
			ln.Append(true)
			ln.ValueBuilder().(*array.NullBuilder).AppendNulls(i%3 + 1)
		}
	}
	return b.NewRecordBatch()
}

// TestEdgeTypesRoundTrip reads odd-sized vectors with null items, a
// vector in a struct and a null-typed column back with mvd's reader.
func TestEdgeTypesRoundTrip(t *testing.T) {
	for _, version := range []lance.FileVersion{"2.2", "2.1", "2.0"} {
		t.Run(string(version), func(t *testing.T) {
			roundTripGo(t, version, edgeRecord(edgeSchema(), 0, 3000, version != "2.0"))
		})
	}
}

// TestEdgeTypesInterop checks the same columns against LanceDB.
func TestEdgeTypesInterop(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	for _, version := range []lance.FileVersion{"2.2", "2.1", "2.0"} {
		t.Run(string(version), func(t *testing.T) {
			t.Parallel()
			as := edgeSchema()
			recs := []arrow.RecordBatch{edgeRecord(as, 0, 1000, version != "2.0"), edgeRecord(as, 1000, 77, version != "2.0")}
			checkLanceDBReads(t, createTable(t, version, recs...), recs...)
		})
	}
}

// TestRefusedTypes names the field and type of what is not written.
func TestRefusedTypes(t *testing.T) {
	cases := []struct {
		name string
		typ  arrow.DataType
		want string
	}{
		{"fslbool", arrow.FixedSizeListOf(4, arrow.FixedWidthTypes.Boolean), "fixed_size_list"},
	}
	for _, c := range cases {
		for _, version := range []lance.FileVersion{"2.2", "2.1"} {
			as := arrow.NewSchema([]arrow.Field{{Name: c.name, Type: c.typ, Nullable: true}}, nil)
			schema, err := lance.NewSchemaFromArrow(as)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			var col arrow.Array
			if st, ok := c.typ.(*arrow.StructType); ok {
				sb := array.NewStructBuilder(memory.DefaultAllocator, st)
				sb.AppendNulls(3)
				col = sb.NewArray()
			} else {
				col = array.MakeArrayOfNull(memory.DefaultAllocator, c.typ, 3)
			}
			rec := array.NewRecordBatch(as, []arrow.Array{col}, 3)
			_, _, err = datawriter.WriteFile(vfs.OS(), filepath.Join(t.TempDir(), "r.lance"), schema, version, []arrow.RecordBatch{rec})
			if !errors.Is(err, datawriter.ErrUnsupported) || !strings.Contains(err.Error(), c.name) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s in %s: err = %v, want ErrUnsupported naming the field and %q", c.name, version, err, c.want)
			}
		}
	}
}

// TestSlicedInputRoundTrip writes record batches that are slices of larger
// ones (Arrow offsets on every array, as pages and fragments cut them) of
// vectors, lists of vectors and nested lists, and reads them back.
func TestSlicedInputRoundTrip(t *testing.T) {
	vec := arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32)
	as := arrow.NewSchema([]arrow.Field{
		{Name: "v", Type: vec, Nullable: true},
		{Name: "lv", Type: arrow.ListOf(vec), Nullable: true},
		{Name: "sv", Type: arrow.StructOf(arrow.Field{Name: "v", Type: vec, Nullable: true}), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	appendVec := func(fb *array.FixedSizeListBuilder, i int) {
		if i%5 == 2 {
			fb.AppendNull()
			return
		}
		fb.Append(true)
		for j := 0; j < 3; j++ {
			if (i+j)%7 == 0 {
				fb.ValueBuilder().AppendNull()
			} else {
				fb.ValueBuilder().(*array.Float32Builder).Append(float32(i*3 + j))
			}
		}
	}
	for i := 0; i < 500; i++ {
		appendVec(b.Field(0).(*array.FixedSizeListBuilder), i)
		lb := b.Field(1).(*array.ListBuilder)
		if i%6 == 1 {
			lb.AppendNull()
		} else {
			lb.Append(true)
			for j := 0; j < i%4; j++ {
				appendVec(lb.ValueBuilder().(*array.FixedSizeListBuilder), i+j)
			}
		}
		sb := b.Field(2).(*array.StructBuilder)
		if i%9 == 4 {
			sb.AppendNull()
		} else {
			sb.Append(true)
		}
		appendVec(sb.FieldBuilder(0).(*array.FixedSizeListBuilder), i+1)
	}
	full := b.NewRecordBatch()
	for _, version := range []lance.FileVersion{"2.2", "2.1"} {
		roundTripGo(t, version, full.NewSlice(137, 431))
	}
}
