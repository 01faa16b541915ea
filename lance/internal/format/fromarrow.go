package format

import (
	"fmt"
	"maps"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// NewSchemaFromArrow converts an Arrow schema to a Lance schema, assigning
// field ids depth first (parent before children) from 0, as Lance does at
// table creation. Schema and field metadata are kept.
func NewSchemaFromArrow(as *arrow.Schema) (*Schema, error) {
	s := &Schema{Metadata: arrowMetaMap(as.Metadata()), byID: map[int32]*Field{}}
	next := int32(0)
	var add func(af arrow.Field, parent int32) (*Field, error)
	add = func(af arrow.Field, parent int32) (*Field, error) {
		lt, children, err := arrowToLogical(af.Type)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", af.Name, err)
		}
		f := &Field{ID: next, ParentID: parent, Name: af.Name, LogicalType: lt, Nullable: af.Nullable, Metadata: arrowMetaMap(af.Metadata)}
		next++
		s.byID[f.ID] = f
		for _, c := range children {
			cf, err := add(c, f.ID)
			if err != nil {
				return nil, err
			}
			f.Children = append(f.Children, cf)
		}
		return f, nil
	}
	for _, af := range as.Fields() {
		f, err := add(af, -1)
		if err != nil {
			return nil, err
		}
		s.Fields = append(s.Fields, f)
	}
	return s, nil
}

func arrowMetaMap(md arrow.Metadata) map[string]string {
	if md.Len() == 0 {
		return nil
	}
	out := make(map[string]string, md.Len())
	for i, k := range md.Keys() {
		out[k] = md.Values()[i]
	}
	return out
}

// arrowToLogical is the inverse of logicalToArrow: the Lance logical type
// of an Arrow type and the child fields Lance stores for it.
func arrowToLogical(dt arrow.DataType) (string, []arrow.Field, error) {
	switch t := dt.(type) {
	case *arrow.StructType:
		return "struct", t.Fields(), nil
	case *arrow.ListType:
		if _, ok := t.Elem().(*arrow.StructType); ok {
			return "list.struct", []arrow.Field{t.ElemField()}, nil
		}
		return "list", []arrow.Field{t.ElemField()}, nil
	case *arrow.LargeListType:
		if _, ok := t.Elem().(*arrow.StructType); ok {
			return "large_list.struct", []arrow.Field{t.ElemField()}, nil
		}
		return "large_list", []arrow.Field{t.ElemField()}, nil
	case *arrow.FixedSizeListType:
		// Lance keeps no child field for a fixed-size list.
		item, children, err := arrowToLogical(t.Elem())
		if err != nil || len(children) != 0 {
			return "", nil, Unsupportedf("fixed_size_list of %s", t.Elem())
		}
		return "fixed_size_list:" + item + ":" + strconv.Itoa(int(t.Len())), nil, nil
	case *arrow.FixedSizeBinaryType:
		return "fixed_size_binary:" + strconv.Itoa(t.ByteWidth), nil, nil
	case *arrow.DictionaryType:
		value, vc, err := arrowToLogical(t.ValueType)
		if err != nil || len(vc) != 0 {
			return "", nil, Unsupportedf("dictionary of %s", t.ValueType)
		}
		index, _, err := arrowToLogical(t.IndexType)
		if err != nil || !arrow.IsInteger(t.IndexType.ID()) {
			return "", nil, Unsupportedf("dictionary indexed by %s", t.IndexType)
		}
		return "dict:" + value + ":" + index + ":" + strconv.FormatBool(t.Ordered), nil, nil
	case *arrow.TimestampType:
		tz := t.TimeZone
		if tz == "" {
			tz = "-"
		}
		return "timestamp:" + unitName(t.Unit) + ":" + tz, nil, nil
	case *arrow.Time32Type:
		return "time32:" + unitName(t.Unit), nil, nil
	case *arrow.Time64Type:
		return "time64:" + unitName(t.Unit), nil, nil
	case *arrow.DurationType:
		return "duration:" + unitName(t.Unit), nil, nil
	case *arrow.Decimal128Type:
		return fmt.Sprintf("decimal:128:%d:%d", t.Precision, t.Scale), nil, nil
	case *arrow.Decimal256Type:
		return fmt.Sprintf("decimal:256:%d:%d", t.Precision, t.Scale), nil, nil
	}
	for _, lt := range [...]string{
		"null", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
		"halffloat", "float", "double", "string", "large_string", "binary", "large_binary",
		"date32:day", "date64:ms",
	} {
		if pt, err := LogicalType(lt); err == nil && arrow.TypeEqual(pt, dt) {
			return lt, nil, nil
		}
	}
	return "", nil, Unsupportedf("arrow type %s", dt)
}

func unitName(u arrow.TimeUnit) string {
	switch u {
	case arrow.Second:
		return "s"
	case arrow.Millisecond:
		return "ms"
	case arrow.Microsecond:
		return "us"
	}
	return "ns"
}

// ProtoFields flattens the schema depth first into Lance's field list, as
// manifests and data files store it.
func ProtoFields(s *Schema) []*tablepb.Field {
	var out []*tablepb.Field
	var walk func(f *Field)
	walk = func(f *Field) {
		out = append(out, fieldProto(f))
		for _, c := range f.Children {
			walk(c)
		}
	}
	for _, f := range s.Fields {
		walk(f)
	}
	return out
}

// fieldProto returns the lance.file.Field message of one field (without
// its children).
func fieldProto(f *Field) *tablepb.Field {
	pf := &tablepb.Field{
		Name:        f.Name,
		Id:          f.ID,
		ParentId:    f.ParentID,
		LogicalType: f.LogicalType,
		Nullable:    f.Nullable,
		Encoding:    legacyEncoding(f.LogicalType),
	}
	if len(f.Metadata) > 0 {
		pf.Metadata = make(map[string][]byte, len(f.Metadata))
		for k, v := range f.Metadata {
			pf.Metadata[k] = []byte(v)
		}
	}
	return pf
}

// legacyEncoding fills the deprecated Field.encoding the way LanceDB 0.39
// still does, for readers that look at it.
func legacyEncoding(lt string) tablepb.Encoding {
	switch lt {
	case "string", "large_string", "binary", "large_binary":
		return tablepb.Encoding_VAR_BINARY
	case "struct", "list", "large_list", "list.struct", "large_list.struct":
		return tablepb.Encoding_NONE
	}
	return tablepb.Encoding_PLAIN
}

// MetadataProto converts string metadata to the protobuf bytes map.
func MetadataProto(m map[string]string) map[string][]byte {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string][]byte, len(m))
	for k, v := range maps.All(m) {
		out[k] = []byte(v)
	}
	return out
}
