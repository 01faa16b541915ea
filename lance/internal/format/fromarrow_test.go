package format

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestSchemaFromArrowRoundTrip: every type mvd writes maps to a Lance
// logical type that maps back to the same Arrow type, with ids assigned
// depth first and metadata kept.
func TestSchemaFromArrowRoundTrip(t *testing.T) {
	md := arrow.NewMetadata([]string{"mv.definition"}, []string{`{"kind":"select"}`})
	fields := []arrow.Field{
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "f16", Type: arrow.FixedWidthTypes.Float16, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: arrow.NewMetadata([]string{"k"}, []string{"v"})},
		{Name: "ls", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "fsb", Type: &arrow.FixedSizeBinaryType{ByteWidth: 16}, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "tsz", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Asia/Kolkata"}, Nullable: true},
		{Name: "t32", Type: arrow.FixedWidthTypes.Time32ms, Nullable: true},
		{Name: "dur", Type: &arrow.DurationType{Unit: arrow.Second}, Nullable: true},
		{Name: "dec", Type: &arrow.Decimal128Type{Precision: 20, Scale: 4}, Nullable: true},
		{Name: "vec", Type: arrow.FixedSizeListOfField(64, arrow.Field{Name: "item", Type: arrow.PrimitiveTypes.Float32, Nullable: true}), Nullable: true},
		{Name: "tags", Type: arrow.ListOfField(arrow.Field{Name: "item", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
		{Name: "rows", Type: arrow.LargeListOfField(arrow.Field{Name: "item", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), Nullable: true}), Nullable: true},
		{Name: "st", Type: arrow.StructOf(
			arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64},
			arrow.Field{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
		), Nullable: true},
		{Name: "dict", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}, Nullable: true},
	}
	want := arrow.NewSchema(fields, &md)
	s, err := NewSchemaFromArrow(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Arrow()
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(want) || !got.Metadata().Equal(want.Metadata()) {
		t.Fatalf("round trip\n got %s\nwant %s", got, want)
	}
	for i, f := range got.Fields() {
		if !f.Metadata.Equal(want.Field(i).Metadata) {
			t.Errorf("field %s metadata %v, want %v", f.Name, f.Metadata, want.Field(i).Metadata)
		}
	}
	// Depth-first ids: "tags" is 14 with its item 15; "rows" is 16, its
	// item struct 17 and that struct's "a" 18.
	if f := s.FieldByID(18); f == nil || f.Name != "a" || s.FieldByID(17).Name != "item" || s.FieldByID(16).Name != "rows" || s.FieldByID(15).ParentID != 14 {
		t.Errorf("ids are not depth first: 16=%v 17=%v 18=%v", s.FieldByID(16), s.FieldByID(17), s.FieldByID(18))
	}
	if s.FieldByID(int32(len(fields)+5)).LogicalType != "dict:string:int16:false" {
		t.Errorf("dictionary logical type %q", s.FieldByID(int32(len(fields)+5)).LogicalType)
	}
	if _, err := NewSchemaFromArrow(arrow.NewSchema([]arrow.Field{{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32)}}, nil)); err == nil {
		t.Error("a map column was accepted")
	}
}

// TestProtoFieldsRoundTrip: flattening a schema and rebuilding it gives
// the same tree, with the same checks every layer runs.
func TestProtoFieldsRoundTrip(t *testing.T) {
	as := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "l", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true}), Nullable: true},
	}, nil)
	s, err := NewSchemaFromArrow(as)
	if err != nil {
		t.Fatal(err)
	}
	back, err := NewSchema(ProtoFields(s), MetadataProto(s.Metadata))
	if err != nil {
		t.Fatal(err)
	}
	got, err := back.Arrow()
	if err != nil || !got.Equal(as) {
		t.Fatalf("round trip: %v, %v", got, err)
	}
	if back.MaxFieldID() != 3 || back.FieldByName("st").Children[0].Children[0].Name != "item" {
		t.Fatalf("rebuilt tree: max id %d", back.MaxFieldID())
	}
}

func TestFileVersion(t *testing.T) {
	for _, s := range []string{"", "2.0", "2.1", "2.2"} {
		if v, err := ParseFileVersion(s); err != nil || string(v) != s {
			t.Errorf("ParseFileVersion(%q) = %q, %v", s, v, err)
		}
	}
	if _, err := ParseFileVersion("2.3"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("2.3: %v", err)
	}
	if FileVersionOf(0, 3) != V2_0 || FileVersionOf(2, 0) != V2_0 || FileVersionOf(2, 2) != V2_2 || FileVersionOf(3, 1) != "3.1" {
		t.Error("FileVersionOf")
	}
	if !V2_2.AtLeast(V2_1) || V2_0.AtLeast(V2_1) || V2_1.Minor() != 1 || V2_0.Major() != 2 {
		t.Error("ordering")
	}
}
