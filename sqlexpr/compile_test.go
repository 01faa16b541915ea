package sqlexpr

import (
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestCompileTypesAndInputs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := smallBatch(mem)
	defer rec.Release()
	cases := []struct {
		src      string
		typ      arrow.DataType
		nullable bool
		inputs   []string
	}{
		{"i32 + 1", tInt32, true, []string{"i32"}},
		{"id + 1", tInt64, false, []string{"id"}},
		{"id * 2 + i8", tInt64, true, []string{"i8", "id"}},
		{"42", tInt64, false, []string{}},
		{"upper(name)", tUtf8, true, []string{"name"}},
		{"st.a > 1 AND name = 'x' OR st.a IS NULL", tBool, true, []string{"name", "st.a"}},
		{"st", rec.Schema().Field(14).Type, true, []string{"st"}},
		{"coalesce(id, i64)", tInt64, false, []string{"id"}}, // simplified to id, as LanceDB does
		{"i8 + u8", arrow.PrimitiveTypes.Int16, true, []string{"i8", "u8"}},
		{"f32 + i64", tFloat32, true, []string{"f32", "i64"}},
		{"name IS NULL", tBool, false, []string{"name"}},
		{"tags[1]", tUtf8, true, []string{"tags"}},
		{"CAST(i32 AS DOUBLE)", tFloat64, true, []string{"i32"}},
		{"CASE WHEN flag THEN 1 END", tInt64, true, []string{"flag"}},
	}
	for _, c := range cases {
		comp, err := CompileSQL(c.src, rec.Schema())
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		if !arrow.TypeEqual(comp.OutputType(), c.typ) || comp.Nullable() != c.nullable || !reflect.DeepEqual(comp.Inputs(), c.inputs) {
			t.Errorf("%s: %s nullable=%v inputs=%q, want %s %v %q", c.src, comp.OutputType(), comp.Nullable(), comp.Inputs(), c.typ, c.nullable, c.inputs)
		}
	}
	comp, err := CompileSQL("`id`", rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	if name, ok := comp.IsColumn(); !ok || name != "id" {
		t.Errorf("IsColumn = %q %v", name, ok)
	}
	if _, ok := mustCompile(t, "id + 0", rec.Schema()).IsColumn(); ok {
		t.Error("id + 0 reported as a bare column")
	}
}

func mustCompile(t *testing.T, src string, schema *arrow.Schema) *Compiled {
	t.Helper()
	c, err := CompileSQL(src, schema)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return c
}

func TestCompileErrors(t *testing.T) {
	mem := memory.NewGoAllocator()
	rec := smallBatch(mem)
	defer rec.Release()
	cases := []struct {
		src  string
		want error
	}{
		{"nope + 1", ErrUnknownColumn},
		{"st.zz", ErrUnknownColumn},
		{"i32.a", ErrType},
		{"i32 * 1.5", ErrType},
		{"i32 > '30'", ErrType},
		{"name = 36", ErrType},
		{"d > '2024-01-01'", ErrType},
		{"i32 IN (1, 2.5)", ErrType},
		{"name AND flag", ErrType},
		{"NOT name", ErrType},
		{"-name", ErrType},
		{"name - name", ErrType},
		{"tags['x']", ErrType},
		{"i32[1]", ErrType},
		{"upper(name, name)", ErrType},
		{"abs(name)", ErrType},
		{"foo(1)", ErrUnsupported},
		{"random()", ErrUnsupported},
		{"to_unixtime(now())", ErrUnsupported},
		{"count(*)", ErrUnsupported},
		{"sum(i32)", ErrUnsupported},
		{"u64 + i64", ErrType},              // Decimal128 in DataFusion
		{"array_length(tags) + 1", ErrType}, // likewise
		{"CAST(i32 AS MONEY)", ErrUnsupported},
		{"CAST(st AS STRING)", ErrUnsupported},
		{"date_part('fortnight', ts)", ErrUnsupported},
		{"named_struct(name, 1)", ErrType},
		{"arrow_cast(i32, 'Decimal128(10, 2)')", ErrUnsupported},
	}
	for _, c := range cases {
		_, err := CompileSQL(c.src, rec.Schema())
		var pe *PosError
		if !errors.Is(err, c.want) || !errors.As(err, &pe) {
			t.Errorf("%s: error %v, want a positioned %v", c.src, err, c.want)
		}
	}
	if _, err := CompileFilter("i32 + 1", rec.Schema()); !errors.Is(err, ErrType) {
		t.Errorf("non-boolean filter: %v", err)
	}
	e, err := Parse("id IS NULL OR i8 > 0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := CompileFilterExpr(e, rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	// A filter keeps the columns it names even where simplification
	// drops them (id IS NULL is false for a NOT NULL id).
	if !reflect.DeepEqual(f.Inputs(), []string{"i8", "id"}) {
		t.Errorf("CompileFilterExpr inputs %q", f.Inputs())
	}
	if _, err := CompileFilter("NULL", rec.Schema()); !errors.Is(err, ErrType) {
		t.Errorf("WHERE NULL: %v", err)
	}
}

// evalStrings evaluates src over rec and renders each value, checking
// that the vectorized and row paths agree.
func evalStrings(t *testing.T, mem memory.Allocator, rec arrow.RecordBatch, src string) (arrow.DataType, []string) {
	t.Helper()
	c := mustCompile(t, src, rec.Schema())
	arr, err := c.EvalWith(mem, rec)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	defer arr.Release()
	row, err := rowOnlyTwin(t, c).EvalWith(mem, rec)
	if err != nil {
		t.Fatalf("%s (row path): %v", src, err)
	}
	defer row.Release()
	if !array.Equal(arr, row) {
		t.Fatalf("%s: paths differ: %v vs %v", src, arr, row)
	}
	out := make([]string, arr.Len())
	for i := range out {
		out[i] = arr.ValueStr(i)
	}
	return arr.DataType(), out
}

func TestEvalErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := smallBatch(mem)
	defer rec.Release()
	for _, src := range []string{"i64 / 0", "i64 % 0", "CAST(name AS INT)", "split_part(name, 'a', 0)", "i64 / (i64 - i64)"} {
		c := mustCompile(t, src, rec.Schema())
		arr, err := c.EvalWith(mem, rec)
		if !errors.Is(err, ErrEval) {
			t.Errorf("%s: error %v, want ErrEval", src, err)
		}
		if arr != nil {
			arr.Release()
		}
	}
	other := arrow.NewSchema([]arrow.Field{{Name: "x", Type: tInt32}}, nil)
	c := mustCompile(t, "i32 + 1", rec.Schema())
	b := array.NewRecordBuilder(mem, other)
	defer b.Release()
	wrong := b.NewRecordBatch()
	defer wrong.Release()
	if _, err := c.EvalWith(mem, wrong); !errors.Is(err, ErrUnknownColumn) {
		t.Errorf("record without the input column: %v", err)
	}
	// A batch holding only the inputs, in another order, is fine.
	sub := array.NewRecordBatch(
		arrow.NewSchema([]arrow.Field{rec.Schema().Field(8), rec.Schema().Field(2)}, nil),
		[]arrow.Array{rec.Column(8), rec.Column(2)}, rec.NumRows())
	defer sub.Release()
	both := mustCompile(t, "concat(name, i32 + 1)", rec.Schema())
	want, err := both.EvalWith(mem, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Release()
	got, err := both.EvalWith(mem, sub)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if !array.Equal(got, want) {
		t.Errorf("inputs-only batch: %v, want %v", got, want)
	}
	retyped := array.NewRecordBatch(
		arrow.NewSchema([]arrow.Field{{Name: "i32", Type: tInt64}}, nil),
		[]arrow.Array{rec.Column(3)}, rec.NumRows())
	defer retyped.Release()
	if _, err := c.EvalWith(mem, retyped); !errors.Is(err, ErrType) {
		t.Errorf("retyped column: %v", err)
	}
}

func TestFilterKeepsOnlyTrueRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := smallBatch(mem)
	defer rec.Release()
	cases := []struct {
		src  string
		rows []int
	}{
		{"i64 >= 0", []int{1, 2}},
		{"NOT (i64 >= 0)", []int{0}},
		{"i64 >= 0 OR i64 IS NULL", []int{1, 2, 3}},
		{"flag AND i64 > 0", []int{2}},
		{"i64 = NULL", []int{}},
		{"false", []int{}},
		{"i64 IS DISTINCT FROM 0", []int{0, 2, 3}},
	}
	for _, c := range cases {
		f, err := CompileFilter(c.src, rec.Schema())
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		sel, err := f.Selection(mem, rec)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if !reflect.DeepEqual(sel, c.rows) {
			t.Errorf("%s: rows %v, want %v", c.src, sel, c.rows)
		}
		kept, err := f.Filter(mem, rec)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		ids := kept.Column(0).(*array.Int64)
		for i, r := range c.rows {
			if ids.Value(i) != int64(r)-1 {
				t.Errorf("%s: kept row %d has id %d", c.src, i, ids.Value(i))
			}
		}
		if int(kept.NumRows()) != len(c.rows) {
			t.Errorf("%s: kept %d rows, want %d", c.src, kept.NumRows(), len(c.rows))
		}
		kept.Release()
	}
}

func TestCompiledIsSafeForConcurrentUse(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := smallBatch(mem)
	defer rec.Release()
	c := mustCompile(t, "CASE WHEN name LIKE 'a%' THEN upper(name) ELSE concat(name, i32 + 1) END", rec.Schema())
	want, err := c.EvalWith(mem, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Release()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := c.EvalWith(mem, rec)
			if err != nil {
				errs <- err
				return
			}
			defer got.Release()
			if !array.Equal(got, want) {
				errs <- errors.New("concurrent result differs")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestCompileOddColumnNames(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "order item", Type: tInt32, Nullable: true},
		{Name: "select", Type: tInt32, Nullable: true},
		{Name: "a`b", Type: tUtf8, Nullable: true},
		{Name: "Mixed Case", Type: tUtf8, Nullable: true},
		{Name: "ünï", Type: tUtf8, Nullable: true},
		{Name: "a-b", Type: tInt32, Nullable: true},
	}, nil)
	cases := []struct {
		src    string
		inputs []string
	}{
		{"order item", []string{"order item"}},
		{"`order item` + 1", []string{"order item"}},
		{"select + 1", []string{"select"}},
		{"select > 1", []string{"select"}},
		{QuoteIdent("a`b"), []string{"a`b"}},
		{QuoteIdent("Mixed Case") + " = 'x'", []string{"Mixed Case"}},
		{"upper(ünï)", []string{"ünï"}},
		{"a-b", []string{"a-b"}},
	}
	for _, c := range cases {
		comp, err := CompileSQL(c.src, schema)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		if !reflect.DeepEqual(comp.Inputs(), c.inputs) {
			t.Errorf("%s: inputs %q, want %q", c.src, comp.Inputs(), c.inputs)
		}
	}
}
