package format

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

func TestLogicalType(t *testing.T) {
	cases := []struct {
		lt   string
		want arrow.DataType
	}{
		{"null", arrow.Null},
		{"bool", arrow.FixedWidthTypes.Boolean},
		{"int8", arrow.PrimitiveTypes.Int8},
		{"uint64", arrow.PrimitiveTypes.Uint64},
		{"halffloat", arrow.FixedWidthTypes.Float16},
		{"float", arrow.PrimitiveTypes.Float32},
		{"double", arrow.PrimitiveTypes.Float64},
		{"string", arrow.BinaryTypes.String},
		{"large_string", arrow.BinaryTypes.LargeString},
		{"binary", arrow.BinaryTypes.Binary},
		{"large_binary", arrow.BinaryTypes.LargeBinary},
		{"json", arrow.BinaryTypes.LargeBinary},
		{"date32:day", arrow.FixedWidthTypes.Date32},
		{"date64:ms", arrow.FixedWidthTypes.Date64},
		{"time32:s", &arrow.Time32Type{Unit: arrow.Second}},
		{"time32:ms", &arrow.Time32Type{Unit: arrow.Millisecond}},
		{"time64:us", &arrow.Time64Type{Unit: arrow.Microsecond}},
		{"time64:ns", &arrow.Time64Type{Unit: arrow.Nanosecond}},
		{"timestamp:us:-", &arrow.TimestampType{Unit: arrow.Microsecond}},
		{"timestamp:ns:UTC", &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}},
		{"timestamp:s:+05:30", &arrow.TimestampType{Unit: arrow.Second, TimeZone: "+05:30"}},
		{"duration:ms", &arrow.DurationType{Unit: arrow.Millisecond}},
		{"decimal:128:20:4", &arrow.Decimal128Type{Precision: 20, Scale: 4}},
		{"decimal:256:60:-2", &arrow.Decimal256Type{Precision: 60, Scale: -2}},
		{"fixed_size_binary:16", &arrow.FixedSizeBinaryType{ByteWidth: 16}},
		{"fixed_size_list:float:128", arrow.FixedSizeListOfField(128, arrow.Field{Name: "item", Type: arrow.PrimitiveTypes.Float32, Nullable: true})},
		{"fixed_size_list:fixed_size_list:int8:2:3", arrow.FixedSizeListOfField(3, arrow.Field{Name: "item", Type: arrow.FixedSizeListOfField(2, arrow.Field{Name: "item", Type: arrow.PrimitiveTypes.Int8, Nullable: true}), Nullable: true})},
		{"dict:string:int32:false", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}},
		{"dict:large_binary:uint8:true", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint8, ValueType: arrow.BinaryTypes.LargeBinary, Ordered: true}},
	}
	for _, c := range cases {
		got, err := LogicalType(c.lt)
		if err != nil {
			t.Errorf("%s: %v", c.lt, err)
			continue
		}
		if !arrow.TypeEqual(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.lt, got, c.want)
		}
	}
	for _, bad := range []string{"", "int128", "time32:us", "time64:s", "timestamp:xs:-", "decimal:64:1:1", "fixed_size_binary:0",
		"fixed_size_list:float:0", "fixed_size_list:nope:4", "dict:string:float:false", "struct", "list", "lance.bfloat16"} {
		if dt, err := LogicalType(bad); err == nil {
			t.Errorf("%q accepted as %v", bad, dt)
		}
	}
}

func TestArrowSchema(t *testing.T) {
	fields := []*tablepb.Field{
		{Name: "id", Id: 0, ParentId: -1, LogicalType: "int64"},
		{Name: "tags", Id: 1, ParentId: -1, LogicalType: "list", Nullable: true},
		{Name: "item", Id: 2, ParentId: 1, LogicalType: "string", Nullable: true},
		{Name: "pts", Id: 3, ParentId: -1, LogicalType: "large_list.struct", Nullable: true},
		{Name: "element", Id: 4, ParentId: 3, LogicalType: "struct", Nullable: false},
		{Name: "x", Id: 5, ParentId: 4, LogicalType: "double", Nullable: true, Metadata: map[string][]byte{"k": []byte("v")}},
		{Name: "vec", Id: 6, ParentId: -1, LogicalType: "fixed_size_list:float:4", Nullable: true},
	}
	ls, err := NewSchema(fields, map[string][]byte{"m": []byte("1")})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ls.Arrow()
	if err != nil {
		t.Fatal(err)
	}
	x := arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: arrow.NewMetadata([]string{"k"}, []string{"v"})}
	md := arrow.NewMetadata([]string{"m"}, []string{"1"})
	want := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "tags", Type: arrow.ListOfField(arrow.Field{Name: "item", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
		{Name: "pts", Type: arrow.LargeListOfField(arrow.Field{Name: "element", Type: arrow.StructOf(x)}), Nullable: true},
		{Name: "vec", Type: arrow.FixedSizeListOfField(4, arrow.Field{Name: "item", Type: arrow.PrimitiveTypes.Float32, Nullable: true}), Nullable: true},
	}, &md)
	if !s.Equal(want) || !s.Metadata().Equal(want.Metadata()) {
		t.Fatalf("got\n%v\nwant\n%v", s, want)
	}
	if !s.Field(2).Type.(*arrow.LargeListType).ElemField().Type.(*arrow.StructType).Field(0).Metadata.Equal(x.Metadata) {
		t.Fatal("field metadata lost")
	}
	dt, err := ls.FieldByID(1).ArrowType()
	if err != nil || !arrow.TypeEqual(dt, want.Field(1).Type) {
		t.Fatalf("ArrowType(1) = %v, %v", dt, err)
	}
	if ls.FieldByID(99) != nil {
		t.Fatal("unknown id found")
	}
	bad := [][]*tablepb.Field{
		{{Name: "a", Id: 1, ParentId: 7, LogicalType: "int32"}},
		{{Name: "l", Id: 1, ParentId: -1, LogicalType: "list"}},
		{{Name: "a", Id: 1, ParentId: -1, LogicalType: "int32"}, {Name: "b", Id: 2, ParentId: 1, LogicalType: "int32"}},
		{{Name: "a", Id: 1, ParentId: -1, LogicalType: "int32"}, {Name: "a", Id: 1, ParentId: -1, LogicalType: "int32"}},
	}
	for i, fs := range bad {
		if _, err := NewSchema(fs, nil); !errors.Is(err, ErrCorrupt) {
			t.Errorf("bad schema %d: err = %v, want ErrCorrupt", i, err)
		}
	}
}
