package datafile

import (
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestAppendJSON(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	cases := []struct {
		dt   arrow.DataType
		json string // input for array.FromJSON, one element
		want string
	}{
		{arrow.PrimitiveTypes.Int64, `[-9223372036854775808]`, `-9223372036854775808`},
		{arrow.PrimitiveTypes.Uint64, `[18446744073709551615]`, `18446744073709551615`},
		{arrow.PrimitiveTypes.Int8, `[null]`, `null`},
		{arrow.FixedWidthTypes.Boolean, `[true]`, `true`},
		{arrow.PrimitiveTypes.Float32, `[0.1]`, `0.1`},
		{arrow.PrimitiveTypes.Float64, `[0.1]`, `0.1`},
		{arrow.PrimitiveTypes.Float64, `[1e300]`, `1e+300`},
		{arrow.BinaryTypes.String, `["a\"b\u0001é"]`, `"a\"b\u0001é"`},
		{arrow.BinaryTypes.LargeString, `["x"]`, `"x"`},
		{arrow.BinaryTypes.Binary, `["AP8="]`, `"AP8="`},
		{&arrow.FixedSizeBinaryType{ByteWidth: 2}, `["AP8="]`, `"AP8="`},
		{arrow.FixedWidthTypes.Date32, `[-1]`, `"1969-12-31"`},
		{arrow.FixedWidthTypes.Date64, `[86400000]`, `"1970-01-02"`},
		{&arrow.TimestampType{Unit: arrow.Second}, `[0]`, `"1970-01-01T00:00:00"`},
		{&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, `[-1]`, `"1969-12-31T23:59:59.999Z"`},
		{&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "+05:30"}, `[1]`, `"1970-01-01T05:30:00.000001+05:30"`},
		{&arrow.TimestampType{Unit: arrow.Nanosecond}, `[1700000000123456789]`, `"2023-11-14T22:13:20.123456789"`},
		{&arrow.Time32Type{Unit: arrow.Millisecond}, `[3723004]`, `"01:02:03.004"`},
		{&arrow.Time64Type{Unit: arrow.Nanosecond}, `[1]`, `"00:00:00.000000001"`},
		{&arrow.Time32Type{Unit: arrow.Second}, `[86399]`, `"23:59:59"`},
		{&arrow.DurationType{Unit: arrow.Microsecond}, `[-5]`, `-5`},
		{arrow.ListOf(arrow.PrimitiveTypes.Int32), `[[1,null,3]]`, `[1,null,3]`},
		{arrow.ListOf(arrow.PrimitiveTypes.Int32), `[[]]`, `[]`},
		{arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), `[[1.5,null]]`, `[1.5,null]`},
		{arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}), `[{"a":1,"b":null}]`, `{"a":1,"b":null}`},
	}
	for _, c := range cases {
		a, _, err := array.FromJSON(mem, c.dt, strings.NewReader(c.json))
		if err != nil {
			t.Fatalf("%v %s: %v", c.dt, c.json, err)
		}
		got, err := AppendJSON(nil, a, 0)
		a.Release()
		if err != nil || string(got) != c.want {
			t.Errorf("%v %s: got %s (%v), want %s", c.dt, c.json, got, err, c.want)
		}
	}

	// Values FromJSON cannot express.
	fb := array.NewFloat64Builder(mem)
	fb.AppendValues([]float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1)}, nil)
	fa := fb.NewArray()
	fb.Release()
	for i, want := range []string{`"NaN"`, `"Infinity"`, `"-Infinity"`, `-0`} {
		if got, _ := AppendJSON(nil, fa, i); string(got) != want {
			t.Errorf("float %d: got %s, want %s", i, got, want)
		}
	}
	fa.Release()

	hb := array.NewFloat16Builder(mem)
	hb.AppendValues([]float16.Num{float16.FromBits(0x0001), float16.FromBits(0xc000), float16.FromBits(0x7bff)}, nil)
	ha := hb.NewArray()
	hb.Release()
	// Shortest decimals that round back to the same float16.
	for i, want := range []string{`6e-8`, `-2`, `65500`} {
		if got, _ := AppendJSON(nil, ha, i); string(got) != want {
			t.Errorf("float16 %d: got %s, want %s", i, got, want)
		}
	}
	ha.Release()

	db := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 20, Scale: 4})
	db.Append(decimal128.FromI64(-12345))
	db.Append(decimal128.FromI64(7))
	db.Append(decimal128.New(math.MaxInt64, math.MaxUint64))
	da := db.NewArray()
	db.Release()
	for i, want := range []string{`"-1.2345"`, `"0.0007"`, `"17014118346046923173168730371588410.5727"`} {
		if got, _ := AppendJSON(nil, da, i); string(got) != want {
			t.Errorf("decimal %d: got %s, want %s", i, got, want)
		}
	}
	da.Release()

	nb := array.NewNullBuilder(mem)
	nb.AppendNull()
	na := nb.NewArray()
	nb.Release()
	if got, _ := AppendJSON(nil, na, 0); string(got) != "null" {
		t.Errorf("null: %s", got)
	}
	na.Release()
}
