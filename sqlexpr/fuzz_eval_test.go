package sqlexpr

import (
	"bufio"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// smallBatch is a few rows over the column names and types of
// testdata/cases.txt, with NULLs, built in Go so the fuzz target needs no
// Node.
func smallBatch(mem memory.Allocator) arrow.RecordBatch {
	st := arrow.StructOf(arrow.Field{Name: "a", Type: tInt32, Nullable: true}, arrow.Field{Name: "b", Type: tUtf8, Nullable: true})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: tInt64},
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "i32", Type: tInt32, Nullable: true},
		{Name: "i64", Type: tInt64, Nullable: true},
		{Name: "u8", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
		{Name: "u64", Type: tUint64, Nullable: true},
		{Name: "f32", Type: tFloat32, Nullable: true},
		{Name: "f64", Type: tFloat64, Nullable: true},
		{Name: "name", Type: tUtf8, Nullable: true},
		{Name: "kind", Type: tUtf8, Nullable: true},
		{Name: "flag", Type: tBool, Nullable: true},
		{Name: "d", Type: tDate32, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(tUtf8), Nullable: true},
		{Name: "st", Type: st, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for r := 0; r < 4; r++ {
		null := r == 3
		for i, f := range schema.Fields() {
			fb := b.Field(i)
			if null && f.Nullable {
				fb.AppendNull()
				continue
			}
			switch x := fb.(type) {
			case *array.Int8Builder:
				x.Append(int8(r*60 - 100))
			case *array.Int32Builder:
				x.Append(int32(r*1000000000 - 2147483600))
			case *array.Int64Builder:
				x.Append(int64(r) - 1)
			case *array.Uint8Builder:
				x.Append(uint8(r * 100))
			case *array.Uint64Builder:
				x.Append(uint64(r) << 62)
			case *array.Float32Builder:
				x.Append(float32(r) - 1.5)
			case *array.Float64Builder:
				x.Append([]float64{0, -0.5, 1e300, 3}[r])
			case *array.StringBuilder:
				x.Append([]string{"", "ab%_", "Ünï", "x"}[r])
			case *array.BooleanBuilder:
				x.Append(r%2 == 0)
			case *array.Date32Builder:
				x.Append(arrow.Date32(19723 + r*400 - 800))
			case *array.TimestampBuilder:
				x.Append(arrow.Timestamp(int64(r-1) * 86400_000_001))
			case *array.ListBuilder:
				x.Append(true)
				vb := x.ValueBuilder().(*array.StringBuilder)
				for k := 0; k < r; k++ {
					vb.Append("t")
				}
				vb.AppendNull()
			case *array.StructBuilder:
				x.Append(true)
				x.FieldBuilder(0).(*array.Int32Builder).Append(int32(r))
				x.FieldBuilder(1).AppendNull()
			}
		}
	}
	return b.NewRecordBatch()
}

// FuzzCompileEval checks that type checking and evaluation of arbitrary
// expressions return errors instead of panicking, that both evaluation
// paths agree, and that no memory leaks.
func FuzzCompileEval(f *testing.F) {
	if file, err := os.Open("testdata/cases.txt"); err == nil {
		sc := bufio.NewScanner(file)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if _, rest, ok := strings.Cut(line, " "); ok && !strings.HasPrefix(line, "#") {
				f.Add(strings.TrimPrefix(rest, "WHERE "))
			}
		}
		file.Close()
	}
	for _, s := range fuzzExprSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		rec := smallBatch(mem)
		defer rec.Release()
		// The filter dialect (double quotes as names, regexp_match as a
		// boolean) must fail cleanly too.
		if fc, err := CompileFilter(src, rec.Schema()); err == nil {
			if _, err := fc.Selection(mem, rec); err != nil && !errors.Is(err, ErrEval) && !errors.Is(err, ErrType) {
				t.Fatalf("%q: filter error without a sentinel: %v", src, err)
			}
		}
		c, err := CompileSQL(src, rec.Schema())
		if err != nil {
			return
		}
		got, err := c.EvalWith(mem, rec)
		if err != nil {
			return
		}
		defer got.Release()
		if !arrow.TypeEqual(got.DataType(), c.OutputType()) {
			t.Fatalf("%q: evaluated to %s, declared %s", src, got.DataType(), c.OutputType())
		}
		if got.Len() != int(rec.NumRows()) {
			t.Fatalf("%q: %d values for %d rows", src, got.Len(), rec.NumRows())
		}
		if !c.Nullable() && got.NullN() > 0 {
			t.Fatalf("%q: declared non-nullable, produced %d NULLs", src, got.NullN())
		}
		twin, err := compile(c.Expr(), rec.Schema(), true)
		if err != nil {
			t.Fatalf("%q: row-only compile: %v", src, err)
		}
		row, err := twin.EvalWith(mem, rec)
		if err != nil {
			t.Fatalf("%q: row path fails where kernels succeed: %v", src, err)
		}
		defer row.Release()
		if !array.ApproxEqual(got, row, array.WithNaNsEqual(true), array.WithAbsTolerance(0)) {
			t.Fatalf("%q: paths differ\n vec %v\n row %v", src, got, row)
		}
	})
}
