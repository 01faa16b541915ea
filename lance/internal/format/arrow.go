package format

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// logicalToArrow maps a Lance logical type string (lance-format.md §1.7) to
// an Arrow type. children are the field's child fields (list items, struct
// members). Leaf types are mapped by LogicalType, the one table of them;
// this function adds the nesting the schema tree carries. Unknown strings
// are refused, never guessed.
func logicalToArrow(lt string, children []*Field) (arrow.DataType, error) {
	head, rest, _ := strings.Cut(lt, ":")
	switch {
	case head == "struct" && rest == "":
		fields := make([]arrow.Field, len(children))
		for i, c := range children {
			af, err := c.Arrow()
			if err != nil {
				return nil, err
			}
			fields[i] = af
		}
		return arrow.StructOf(fields...), nil
	case rest == "" && (head == "list" || head == "list.struct" || head == "large_list" || head == "large_list.struct"):
		if len(children) != 1 {
			return nil, Corruptf("list type %q has %d child fields, want 1", lt, len(children))
		}
		item, err := children[0].Arrow()
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(head, "large_") {
			return arrow.LargeListOfField(item), nil
		}
		return arrow.ListOfField(item), nil
	case head == "fixed_size_list" && len(children) == 1:
		// Lance normally stores no child for an FSL (LogicalType covers
		// that); when one is there, it describes the items.
		i := strings.LastIndexByte(rest, ':')
		n, err := strconv.ParseInt(rest[i+1:], 10, 32)
		if i < 0 || err != nil || n <= 0 {
			return nil, Unsupportedf("logical type %q", lt)
		}
		item, err := children[0].Arrow()
		if err != nil {
			return nil, err
		}
		return arrow.FixedSizeListOfField(int32(n), item), nil
	}
	if len(children) != 0 {
		return nil, Corruptf("type %q has %d child fields", lt, len(children))
	}
	return LogicalType(lt)
}

// LogicalType maps a Lance logical type string of a leaf (anything but
// struct and list) to its Arrow type. Types it does not know wrap
// ErrUnsupported.
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
		return nil, Unsupportedf("logical type %q (bfloat16 extension)", lt)
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
	return nil, Unsupportedf("unknown logical type %q", lt)
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
