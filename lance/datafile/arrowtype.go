package datafile

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// ArrowSchema converts a flattened Lance field list (manifest or file
// schema) and its schema metadata into an Arrow schema.
func ArrowSchema(fields []*tablepb.Field, metadata map[string][]byte) (*arrow.Schema, error) {
	t, err := buildTree(fields, false)
	if err != nil {
		return nil, err
	}
	out := make([]arrow.Field, 0, len(t.top))
	for _, n := range t.top {
		f, err := arrowField(n)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	var md *arrow.Metadata
	if len(metadata) > 0 {
		m := bytesMetadata(metadata)
		md = &m
	}
	return arrow.NewSchema(out, md), nil
}

// ArrowType returns the Arrow type of the field with the given id within the
// flattened Lance field list fields.
func ArrowType(fields []*tablepb.Field, id int32) (arrow.DataType, error) {
	f, err := ArrowField(fields, id)
	if err != nil {
		return nil, err
	}
	return f.Type, nil
}

// ArrowField returns the Arrow field (name, type, nullability, metadata) of
// the field with the given id within the flattened Lance field list fields.
func ArrowField(fields []*tablepb.Field, id int32) (arrow.Field, error) {
	t, err := buildTree(fields, false)
	if err != nil {
		return arrow.Field{}, err
	}
	n, ok := t.byID[id]
	if !ok {
		return arrow.Field{}, fmt.Errorf("no field with id %d", id)
	}
	return arrowField(n)
}

func bytesMetadata(m map[string][]byte) arrow.Metadata {
	keys := make([]string, 0, len(m))
	vals := make([]string, 0, len(m))
	for k, v := range m {
		keys = append(keys, k)
		vals = append(vals, string(v))
	}
	return arrow.NewMetadata(keys, vals)
}

func arrowField(n *fieldNode) (arrow.Field, error) {
	dt, err := nodeType(n)
	if err != nil {
		return arrow.Field{}, err
	}
	f := arrow.Field{Name: n.f.GetName(), Type: dt, Nullable: n.f.GetNullable()}
	if len(n.f.GetMetadata()) > 0 {
		f.Metadata = bytesMetadata(n.f.GetMetadata())
	}
	return f, nil
}

func nodeType(n *fieldNode) (arrow.DataType, error) {
	lt := n.f.GetLogicalType()
	switch {
	case isStructType(lt):
		fs := make([]arrow.Field, 0, len(n.children))
		for _, c := range n.children {
			f, err := arrowField(c)
			if err != nil {
				return nil, err
			}
			fs = append(fs, f)
		}
		return arrow.StructOf(fs...), nil
	case isListType(lt):
		item, err := arrowField(n.children[0])
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(lt, "large_") {
			return arrow.LargeListOfField(item), nil
		}
		return arrow.ListOfField(item), nil
	}
	dt, err := LogicalType(lt)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", n, err)
	}
	return dt, nil
}

// LogicalType maps a Lance logical type string of a leaf (anything but
// struct and list) to its Arrow type.
func LogicalType(lt string) (arrow.DataType, error) {
	switch lt {
	case "null":
		return arrow.Null, nil
	case "bool":
		return arrow.FixedWidthTypes.Boolean, nil
	case "int8":
		return arrow.PrimitiveTypes.Int8, nil
	case "int16":
		return arrow.PrimitiveTypes.Int16, nil
	case "int32":
		return arrow.PrimitiveTypes.Int32, nil
	case "int64":
		return arrow.PrimitiveTypes.Int64, nil
	case "uint8":
		return arrow.PrimitiveTypes.Uint8, nil
	case "uint16":
		return arrow.PrimitiveTypes.Uint16, nil
	case "uint32":
		return arrow.PrimitiveTypes.Uint32, nil
	case "uint64":
		return arrow.PrimitiveTypes.Uint64, nil
	case "halffloat":
		return arrow.FixedWidthTypes.Float16, nil
	case "float":
		return arrow.PrimitiveTypes.Float32, nil
	case "double":
		return arrow.PrimitiveTypes.Float64, nil
	case "string":
		return arrow.BinaryTypes.String, nil
	case "large_string":
		return arrow.BinaryTypes.LargeString, nil
	case "binary":
		return arrow.BinaryTypes.Binary, nil
	case "large_binary", "json":
		return arrow.BinaryTypes.LargeBinary, nil
	case "date32:day":
		return arrow.FixedWidthTypes.Date32, nil
	case "date64:ms":
		return arrow.FixedWidthTypes.Date64, nil
	case "lance.bfloat16":
		return nil, fmt.Errorf("logical type %q (bfloat16 extension) is not supported", lt)
	}
	parts := strings.Split(lt, ":")
	switch parts[0] {
	case "time32", "time64", "duration":
		if len(parts) != 2 {
			break
		}
		u, ok := timeUnit(parts[1])
		if !ok {
			break
		}
		switch {
		case parts[0] == "duration":
			return &arrow.DurationType{Unit: u}, nil
		case parts[0] == "time32" && (u == arrow.Second || u == arrow.Millisecond):
			return &arrow.Time32Type{Unit: u}, nil
		case parts[0] == "time64" && (u == arrow.Microsecond || u == arrow.Nanosecond):
			return &arrow.Time64Type{Unit: u}, nil
		}
	case "timestamp":
		if len(parts) < 3 {
			break
		}
		u, ok := timeUnit(parts[1])
		if !ok {
			break
		}
		// A time zone may itself contain ':' (an offset such as +05:30).
		tz := strings.Join(parts[2:], ":")
		if tz == "-" {
			tz = ""
		}
		return &arrow.TimestampType{Unit: u, TimeZone: tz}, nil
	case "decimal":
		if len(parts) != 4 {
			break
		}
		p, err1 := strconv.ParseInt(parts[2], 10, 32)
		s, err2 := strconv.ParseInt(parts[3], 10, 32)
		if err1 != nil || err2 != nil {
			break
		}
		switch parts[1] {
		case "128":
			return &arrow.Decimal128Type{Precision: int32(p), Scale: int32(s)}, nil
		case "256":
			return &arrow.Decimal256Type{Precision: int32(p), Scale: int32(s)}, nil
		}
	case "fixed_size_binary":
		if len(parts) != 2 {
			break
		}
		w, err := strconv.ParseInt(parts[1], 10, 32)
		if err != nil || w <= 0 {
			break
		}
		return &arrow.FixedSizeBinaryType{ByteWidth: int(w)}, nil
	case "fixed_size_list":
		// fixed_size_list:<item logical type>:<n>; the item type may contain ':'.
		if len(parts) < 3 {
			break
		}
		dim, err := strconv.ParseInt(parts[len(parts)-1], 10, 32)
		if err != nil || dim <= 0 {
			break
		}
		item, err := LogicalType(strings.Join(parts[1:len(parts)-1], ":"))
		if err != nil {
			return nil, fmt.Errorf("logical type %q: %w", lt, err)
		}
		// Lance keeps no child field for FSL; its items are nullable "item".
		return arrow.FixedSizeListOfField(int32(dim), arrow.Field{Name: "item", Type: item, Nullable: true}), nil
	case "dict":
		// dict:<value type>:<index type>:<ordered>
		if len(parts) < 4 {
			break
		}
		val, err := LogicalType(strings.Join(parts[1:len(parts)-2], ":"))
		if err != nil {
			return nil, fmt.Errorf("logical type %q: %w", lt, err)
		}
		idx, err := LogicalType(parts[len(parts)-2])
		if err != nil {
			return nil, fmt.Errorf("logical type %q: %w", lt, err)
		}
		if !arrow.IsInteger(idx.ID()) {
			break
		}
		return &arrow.DictionaryType{IndexType: idx, ValueType: val, Ordered: parts[len(parts)-1] == "true"}, nil
	}
	return nil, fmt.Errorf("unknown logical type %q", lt)
}

func timeUnit(s string) (arrow.TimeUnit, bool) {
	switch s {
	case "s":
		return arrow.Second, true
	case "ms":
		return arrow.Millisecond, true
	case "us":
		return arrow.Microsecond, true
	case "ns":
		return arrow.Nanosecond, true
	}
	return 0, false
}
