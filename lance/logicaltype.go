package lance

import (
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// logicalToArrow maps a Lance logical type string (lance-format.md §1.7) to
// an Arrow type. children are the field's child fields (list items, struct
// members). Unknown strings are refused, never guessed.
func logicalToArrow(lt string, children []*Field) (arrow.DataType, error) {
	if dt := primitiveType(lt); dt != nil {
		if len(children) != 0 {
			return nil, corruptf("type %q has %d child fields", lt, len(children))
		}
		return dt, nil
	}
	head, rest, _ := strings.Cut(lt, ":")
	switch head {
	case "struct":
		if rest != "" {
			break
		}
		fields := make([]arrow.Field, len(children))
		for i, c := range children {
			af, err := c.Arrow()
			if err != nil {
				return nil, err
			}
			fields[i] = af
		}
		return arrow.StructOf(fields...), nil
	case "list", "list.struct", "large_list", "large_list.struct":
		if rest != "" {
			break
		}
		if len(children) != 1 {
			return nil, corruptf("list type %q has %d child fields, want 1", lt, len(children))
		}
		item, err := children[0].Arrow()
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(head, "large_") {
			return arrow.LargeListOfField(item), nil
		}
		return arrow.ListOfField(item), nil
	case "fixed_size_list":
		// "fixed_size_list:{item type}:{n}"; the item type may itself hold colons.
		i := strings.LastIndexByte(rest, ':')
		if i < 0 {
			break
		}
		n, err := strconv.ParseInt(rest[i+1:], 10, 32)
		if err != nil || n < 0 {
			break
		}
		item := arrow.Field{Name: "item", Nullable: true}
		switch len(children) {
		case 0:
			// Lance stores no child for an FSL: items are nullable "item".
			if item.Type, err = logicalToArrow(rest[:i], nil); err != nil {
				return nil, err
			}
		case 1:
			if item, err = children[0].Arrow(); err != nil {
				return nil, err
			}
		default:
			return nil, corruptf("fixed_size_list has %d child fields", len(children))
		}
		return arrow.FixedSizeListOfField(int32(n), item), nil
	case "fixed_size_binary":
		n, err := strconv.ParseInt(rest, 10, 32)
		if err != nil || n < 0 {
			break
		}
		return &arrow.FixedSizeBinaryType{ByteWidth: int(n)}, nil
	case "timestamp":
		// "timestamp:{unit}:{tz or -}"; a time zone such as "+05:30" holds colons.
		unitStr, tz, ok := strings.Cut(rest, ":")
		unit, uok := timeUnit(unitStr)
		if !ok || !uok || tz == "" {
			break
		}
		if tz == "-" {
			tz = ""
		}
		return &arrow.TimestampType{Unit: unit, TimeZone: tz}, nil
	case "time32":
		switch rest {
		case "s":
			return arrow.FixedWidthTypes.Time32s, nil
		case "ms":
			return arrow.FixedWidthTypes.Time32ms, nil
		}
	case "time64":
		switch rest {
		case "us":
			return arrow.FixedWidthTypes.Time64us, nil
		case "ns":
			return arrow.FixedWidthTypes.Time64ns, nil
		}
	case "duration":
		if unit, ok := timeUnit(rest); ok {
			return &arrow.DurationType{Unit: unit}, nil
		}
	case "decimal":
		parts := strings.Split(rest, ":")
		if len(parts) != 3 {
			break
		}
		p, err1 := strconv.ParseInt(parts[1], 10, 32)
		s, err2 := strconv.ParseInt(parts[2], 10, 32)
		if err1 != nil || err2 != nil {
			break
		}
		switch parts[0] {
		case "128":
			return &arrow.Decimal128Type{Precision: int32(p), Scale: int32(s)}, nil
		case "256":
			return &arrow.Decimal256Type{Precision: int32(p), Scale: int32(s)}, nil
		}
	case "dict":
		// "dict:{value type}:{index type}:{ordered}"
		parts := strings.Split(rest, ":")
		if len(parts) != 3 {
			break
		}
		value := primitiveType(parts[0])
		index := primitiveType(parts[1])
		if value == nil || index == nil || !arrow.IsInteger(index.ID()) {
			break
		}
		return &arrow.DictionaryType{IndexType: index, ValueType: value, Ordered: parts[2] == "true"}, nil
	}
	return nil, unsupportedf("logical type %q", lt)
}

// primitiveType maps the logical types that need no parameters.
func primitiveType(lt string) arrow.DataType {
	switch lt {
	case "null":
		return arrow.Null
	case "bool":
		return arrow.FixedWidthTypes.Boolean
	case "int8":
		return arrow.PrimitiveTypes.Int8
	case "int16":
		return arrow.PrimitiveTypes.Int16
	case "int32":
		return arrow.PrimitiveTypes.Int32
	case "int64":
		return arrow.PrimitiveTypes.Int64
	case "uint8":
		return arrow.PrimitiveTypes.Uint8
	case "uint16":
		return arrow.PrimitiveTypes.Uint16
	case "uint32":
		return arrow.PrimitiveTypes.Uint32
	case "uint64":
		return arrow.PrimitiveTypes.Uint64
	case "halffloat":
		return arrow.FixedWidthTypes.Float16
	case "float":
		return arrow.PrimitiveTypes.Float32
	case "double":
		return arrow.PrimitiveTypes.Float64
	case "string":
		return arrow.BinaryTypes.String
	case "large_string":
		return arrow.BinaryTypes.LargeString
	case "binary":
		return arrow.BinaryTypes.Binary
	case "large_binary":
		return arrow.BinaryTypes.LargeBinary
	case "date32:day":
		return arrow.FixedWidthTypes.Date32
	case "date64:ms":
		return arrow.FixedWidthTypes.Date64
	}
	return nil
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
