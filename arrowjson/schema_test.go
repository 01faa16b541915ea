package arrowjson

import (
	"encoding/json"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestTypeString(t *testing.T) {
	tests := []struct {
		dt   arrow.DataType
		want string
	}{
		{arrow.Null, "null"},
		{arrow.FixedWidthTypes.Boolean, "bool"},
		{arrow.PrimitiveTypes.Int8, "int8"},
		{arrow.PrimitiveTypes.Uint64, "uint64"},
		{arrow.FixedWidthTypes.Float16, "float16"},
		{arrow.PrimitiveTypes.Float64, "float64"},
		{arrow.BinaryTypes.String, "utf8"},
		{arrow.BinaryTypes.LargeString, "large_utf8"},
		{arrow.BinaryTypes.Binary, "binary"},
		{arrow.BinaryTypes.LargeBinary, "large_binary"},
		{&arrow.FixedSizeBinaryType{ByteWidth: 16}, "fixed_size_binary[16]"},
		{arrow.FixedWidthTypes.Date32, "date32"},
		{arrow.FixedWidthTypes.Date64, "date64"},
		{&arrow.TimestampType{Unit: arrow.Microsecond}, "timestamp[us]"},
		{&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, "timestamp[ns, tz=UTC]"},
		{arrow.FixedWidthTypes.Time32ms, "time32[ms]"},
		{arrow.FixedWidthTypes.Time64ns, "time64[ns]"},
		{&arrow.DurationType{Unit: arrow.Second}, "duration[s]"},
		{&arrow.Decimal128Type{Precision: 38, Scale: 10}, "decimal128(38, 10)"},
		{arrow.ListOf(arrow.BinaryTypes.String), "list"},
		{arrow.LargeListOf(arrow.PrimitiveTypes.Int32), "large_list"},
		{arrow.FixedSizeListOf(128, arrow.PrimitiveTypes.Float32), "fixed_size_list[128]"},
		{arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}), "struct"},
		{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}, "dictionary<int16>"},
	}
	for _, tc := range tests {
		got, err := TypeString(tc.dt)
		if err != nil || got != tc.want {
			t.Errorf("TypeString(%s) = %q, %v; want %q", tc.dt, got, err, tc.want)
		}
	}
	if _, err := TypeString(arrow.FixedWidthTypes.MonthInterval); err == nil {
		t.Error("an unmapped type was given a name")
	}
}

func TestFromSchemaNested(t *testing.T) {
	md := arrow.NewMetadata([]string{"mv.definition"}, []string{"{}"})
	s := arrow.NewSchema([]arrow.Field{
		{Name: "tags", Type: arrow.ListOfField(arrow.Field{Name: "item", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64}), Metadata: arrow.NewMetadata([]string{"k"}, []string{"v"})},
	}, &md)
	cs, err := FromSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(cs)
	want := `{"fields":[{"name":"tags","type":"list","nullable":true,"metadata":{},"children":[{"name":"item","type":"utf8","nullable":true,"metadata":{}}]},` +
		`{"name":"st","type":"struct","nullable":false,"metadata":{"k":"v"},"children":[{"name":"a","type":"int64","nullable":false,"metadata":{}}]}],"metadata":{"mv.definition":"{}"}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
