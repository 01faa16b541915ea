package sqlexpr

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Shorthands for the types the rules below produce.
var (
	tBool    = arrow.FixedWidthTypes.Boolean
	tInt32   = arrow.PrimitiveTypes.Int32
	tInt64   = arrow.PrimitiveTypes.Int64
	tUint64  = arrow.PrimitiveTypes.Uint64
	tFloat32 = arrow.PrimitiveTypes.Float32
	tFloat64 = arrow.PrimitiveTypes.Float64
	tUtf8    = arrow.BinaryTypes.String
	tBinary  = arrow.BinaryTypes.Binary
	tDate32  = arrow.FixedWidthTypes.Date32
	tNull    = arrow.Null
)

func isSigned(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return true
	}
	return false
}

func isUnsigned(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return true
	}
	return false
}

func isInteger(t arrow.DataType) bool { return isSigned(t) || isUnsigned(t) }

func isFloat(t arrow.DataType) bool {
	return t.ID() == arrow.FLOAT32 || t.ID() == arrow.FLOAT64
}

func isNumeric(t arrow.DataType) bool { return isInteger(t) || isFloat(t) }

func isString(t arrow.DataType) bool {
	return t.ID() == arrow.STRING || t.ID() == arrow.LARGE_STRING
}

func isTemporal(t arrow.DataType) bool {
	return t.ID() == arrow.DATE32 || t.ID() == arrow.TIMESTAMP
}

func isNull(t arrow.DataType) bool { return t.ID() == arrow.NULL }

func isList(t arrow.DataType) bool {
	return t.ID() == arrow.LIST || t.ID() == arrow.LARGE_LIST
}

// intWidth is the bit width of an integer type.
func intWidth(t arrow.DataType) int {
	switch t.ID() {
	case arrow.INT8, arrow.UINT8:
		return 8
	case arrow.INT16, arrow.UINT16:
		return 16
	case arrow.INT32, arrow.UINT32:
		return 32
	}
	return 64
}

func signedOfWidth(w int) arrow.DataType {
	switch w {
	case 8:
		return arrow.PrimitiveTypes.Int8
	case 16:
		return arrow.PrimitiveTypes.Int16
	case 32:
		return arrow.PrimitiveTypes.Int32
	}
	return arrow.PrimitiveTypes.Int64
}

// numericCommon is the type two numeric operands are brought to, following
// DataFusion's binary numeric coercion: floats win (Float64 over
// Float32); same-signedness integers widen; mixed signedness takes the
// signed type wide enough for both. ok is false for Int64 with UInt64,
// which DataFusion only reconciles through decimals.
func numericCommon(a, b arrow.DataType) (arrow.DataType, bool) {
	switch {
	case arrow.TypeEqual(a, b):
		return a, true
	case a.ID() == arrow.FLOAT64 || b.ID() == arrow.FLOAT64:
		return tFloat64, true
	case a.ID() == arrow.FLOAT32 || b.ID() == arrow.FLOAT32:
		return tFloat32, true
	}
	wa, wb := intWidth(a), intWidth(b)
	if isSigned(a) == isSigned(b) {
		if wa >= wb {
			return a, true
		}
		return b, true
	}
	ws, wu := wa, wb
	if isUnsigned(a) {
		ws, wu = wb, wa
	}
	need := ws
	if wu >= need {
		need = wu * 2
	}
	if need > 64 {
		return nil, false
	}
	return signedOfWidth(need), true
}

// commonType is the type two operands of a comparison, CASE, coalesce,
// IN list or similar are brought to, or ok=false when there is none.
func commonType(a, b arrow.DataType) (arrow.DataType, bool) {
	switch {
	case isNull(a):
		return b, true
	case isNull(b):
		return a, true
	case arrow.TypeEqual(a, b):
		return a, true
	case isList(a) && isList(b):
		// Lists of one element type, whatever their fields are called.
		if arrow.TypeEqual(a.(arrow.ListLikeType).Elem(), b.(arrow.ListLikeType).Elem()) {
			return a, true
		}
		return nil, false
	case isNumeric(a) && isNumeric(b):
		return numericCommon(a, b)
	case isString(a) && isString(b):
		if a.ID() == arrow.LARGE_STRING || b.ID() == arrow.LARGE_STRING {
			return arrow.BinaryTypes.LargeString, true
		}
		return tUtf8, true
	case isTemporal(a) && isTemporal(b):
		// A zoned timestamp wins over a zone-less one (which is then read
		// as local time in its zone), as in DataFusion.
		if at, ok := a.(*arrow.TimestampType); ok {
			if bt, ok := b.(*arrow.TimestampType); ok && at.TimeZone == "" && bt.TimeZone != "" {
				return b, true
			}
			return a, true
		}
		return b, true
	case isTemporal(a) && isString(b):
		return a, true
	case isString(a) && isTemporal(b):
		return b, true
	case isString(a) && isNumeric(b):
		// DataFusion reads the string as a number (failing on rows that
		// are not numbers).
		return b, true
	case isNumeric(a) && isString(b):
		return a, true
	}
	return nil, false
}

// sqlType maps a SQL type name from CAST to an Arrow type, accepting the
// names Lance accepts plus the standard VARCHAR/TEXT/CHAR spellings.
func sqlType(name string) (arrow.DataType, bool) {
	switch name {
	case "STRING", "VARCHAR", "TEXT", "CHAR", "CHARACTER VARYING", "CHAR VARYING", "CHARACTER":
		return tUtf8, true
	case "BIGINT", "INT8", "LONG":
		return tInt64, true
	case "INT", "INTEGER", "INT4":
		return tInt32, true
	case "SMALLINT", "INT2":
		return arrow.PrimitiveTypes.Int16, true
	case "TINYINT":
		return arrow.PrimitiveTypes.Int8, true
	case "BIGINT UNSIGNED":
		return tUint64, true
	case "INT UNSIGNED", "INTEGER UNSIGNED":
		return arrow.PrimitiveTypes.Uint32, true
	case "SMALLINT UNSIGNED":
		return arrow.PrimitiveTypes.Uint16, true
	case "TINYINT UNSIGNED":
		return arrow.PrimitiveTypes.Uint8, true
	case "DOUBLE", "DOUBLE PRECISION", "FLOAT8":
		return tFloat64, true
	case "FLOAT", "REAL", "FLOAT4":
		return tFloat32, true
	case "BOOLEAN", "BOOL":
		return tBool, true
	case "DATE":
		return tDate32, true
	case "TIMESTAMP", "DATETIME", "TIMESTAMP WITHOUT TIME ZONE":
		return &arrow.TimestampType{Unit: arrow.Microsecond}, true
	case "BINARY", "BYTEA", "BLOB", "VARBINARY":
		return tBinary, true
	}
	return nil, false
}

// arrowTypeName maps an arrow_cast type string (Arrow's Display form) to
// a type.
func arrowTypeName(s string) (arrow.DataType, bool) {
	s = strings.TrimSpace(s)
	switch s {
	case "Int8":
		return arrow.PrimitiveTypes.Int8, true
	case "Int16":
		return arrow.PrimitiveTypes.Int16, true
	case "Int32":
		return tInt32, true
	case "Int64":
		return tInt64, true
	case "UInt8":
		return arrow.PrimitiveTypes.Uint8, true
	case "UInt16":
		return arrow.PrimitiveTypes.Uint16, true
	case "UInt32":
		return arrow.PrimitiveTypes.Uint32, true
	case "UInt64":
		return tUint64, true
	case "Float32":
		return tFloat32, true
	case "Float64":
		return tFloat64, true
	case "Utf8":
		return tUtf8, true
	case "LargeUtf8":
		return arrow.BinaryTypes.LargeString, true
	case "Binary":
		return tBinary, true
	case "Boolean":
		return tBool, true
	case "Date32":
		return tDate32, true
	}
	for _, u := range []struct {
		name string
		unit arrow.TimeUnit
	}{{"Second", arrow.Second}, {"Millisecond", arrow.Millisecond}, {"Microsecond", arrow.Microsecond}, {"Nanosecond", arrow.Nanosecond}} {
		if s == "Timestamp("+u.name+", None)" {
			return &arrow.TimestampType{Unit: u.unit}, true
		}
	}
	return nil, false
}
