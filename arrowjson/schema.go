// Package arrowjson renders Arrow schemas (and, later, values) in the JSON
// conventions mvd's CLI prints and its LanceDB harness records, so the two
// can be compared exactly.
package arrowjson

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// Schema is the canonical JSON form of an Arrow schema.
type Schema struct {
	Fields   []Field           `json:"fields"`
	Metadata map[string]string `json:"metadata"`
}

// Field is the canonical JSON form of an Arrow field.
type Field struct {
	Name     string            `json:"name"`
	Type     string            `json:"type"`
	Nullable bool              `json:"nullable"`
	Metadata map[string]string `json:"metadata"`
	Children []Field           `json:"children,omitempty"`
}

// FromSchema converts an Arrow schema to its canonical form.
func FromSchema(s *arrow.Schema) (Schema, error) {
	out := Schema{Fields: []Field{}, Metadata: metadata(s.Metadata())}
	for _, f := range s.Fields() {
		cf, err := FromField(f)
		if err != nil {
			return Schema{}, err
		}
		out.Fields = append(out.Fields, cf)
	}
	return out, nil
}

// FromField converts an Arrow field to its canonical form.
func FromField(f arrow.Field) (Field, error) {
	ts, children, err := typeString(f.Type)
	if err != nil {
		return Field{}, fmt.Errorf("field %q: %w", f.Name, err)
	}
	out := Field{Name: f.Name, Type: ts, Nullable: f.Nullable, Metadata: metadata(f.Metadata)}
	for _, c := range children {
		cf, err := FromField(c)
		if err != nil {
			return Field{}, fmt.Errorf("field %q: %w", f.Name, err)
		}
		out.Children = append(out.Children, cf)
	}
	return out, nil
}

func metadata(m arrow.Metadata) map[string]string {
	out := make(map[string]string, m.Len())
	for i, k := range m.Keys() {
		out[k] = m.Values()[i]
	}
	return out
}

// TypeString returns the canonical name of an Arrow type (children, if
// any, are not described).
func TypeString(dt arrow.DataType) (string, error) {
	s, _, err := typeString(dt)
	return s, err
}

func typeString(dt arrow.DataType) (string, []arrow.Field, error) {
	switch t := dt.(type) {
	case *arrow.NullType:
		return "null", nil, nil
	case *arrow.BooleanType:
		return "bool", nil, nil
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type,
		*arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type, *arrow.Uint64Type,
		*arrow.Float16Type, *arrow.Float32Type, *arrow.Float64Type,
		*arrow.BinaryType, *arrow.LargeBinaryType, *arrow.LargeStringType,
		*arrow.Date32Type, *arrow.Date64Type:
		return t.Name(), nil, nil
	case *arrow.StringType:
		return "utf8", nil, nil
	case *arrow.FixedSizeBinaryType:
		return fmt.Sprintf("fixed_size_binary[%d]", t.ByteWidth), nil, nil
	case *arrow.TimestampType:
		if t.TimeZone == "" {
			return fmt.Sprintf("timestamp[%s]", t.Unit), nil, nil
		}
		return fmt.Sprintf("timestamp[%s, tz=%s]", t.Unit, t.TimeZone), nil, nil
	case *arrow.Time32Type:
		return fmt.Sprintf("time32[%s]", t.Unit), nil, nil
	case *arrow.Time64Type:
		return fmt.Sprintf("time64[%s]", t.Unit), nil, nil
	case *arrow.DurationType:
		return fmt.Sprintf("duration[%s]", t.Unit), nil, nil
	case *arrow.Decimal128Type:
		return fmt.Sprintf("decimal128(%d, %d)", t.Precision, t.Scale), nil, nil
	case *arrow.Decimal256Type:
		return fmt.Sprintf("decimal256(%d, %d)", t.Precision, t.Scale), nil, nil
	case *arrow.ListType:
		return "list", []arrow.Field{t.ElemField()}, nil
	case *arrow.LargeListType:
		return "large_list", []arrow.Field{t.ElemField()}, nil
	case *arrow.FixedSizeListType:
		return fmt.Sprintf("fixed_size_list[%d]", t.Len()), []arrow.Field{t.ElemField()}, nil
	case *arrow.StructType:
		return "struct", t.Fields(), nil
	case *arrow.MapType:
		return "map", []arrow.Field{t.ElemField()}, nil
	case *arrow.DictionaryType:
		idx, _, err := typeString(t.IndexType)
		if err != nil {
			return "", nil, err
		}
		return fmt.Sprintf("dictionary<%s>", idx), []arrow.Field{{Name: "values", Type: t.ValueType, Nullable: true}}, nil
	}
	return "", nil, fmt.Errorf("no canonical name for Arrow type %s", dt)
}
