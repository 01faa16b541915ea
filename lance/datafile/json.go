package datafile

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// AppendJSON appends value i of a as JSON to dst, with mvd's conventions:
// null; integers of every width as exact JSON integers; floats as shortest
// round-trip numbers (NaN and infinities as the strings "NaN", "Infinity",
// "-Infinity"); strings; binary as base64; dates "YYYY-MM-DD"; timestamps
// RFC 3339 with the unit's fractional digits, with "Z" or an offset only
// when the type has a time zone; times "HH:MM:SS[.fff]"; durations as
// integers in their unit; decimals as exact decimal strings; lists and
// fixed-size lists as arrays; structs as objects.
func AppendJSON(dst []byte, a arrow.Array, i int) ([]byte, error) {
	if _, isNull := a.(*array.Null); isNull || a.IsNull(i) {
		return append(dst, "null"...), nil
	}
	switch v := a.(type) {
	case *array.Boolean:
		return strconv.AppendBool(dst, v.Value(i)), nil
	case *array.Int8:
		return strconv.AppendInt(dst, int64(v.Value(i)), 10), nil
	case *array.Int16:
		return strconv.AppendInt(dst, int64(v.Value(i)), 10), nil
	case *array.Int32:
		return strconv.AppendInt(dst, int64(v.Value(i)), 10), nil
	case *array.Int64:
		return strconv.AppendInt(dst, v.Value(i), 10), nil
	case *array.Uint8:
		return strconv.AppendUint(dst, uint64(v.Value(i)), 10), nil
	case *array.Uint16:
		return strconv.AppendUint(dst, uint64(v.Value(i)), 10), nil
	case *array.Uint32:
		return strconv.AppendUint(dst, uint64(v.Value(i)), 10), nil
	case *array.Uint64:
		return strconv.AppendUint(dst, v.Value(i), 10), nil
	case *array.Float16:
		return appendHalf(dst, v.Value(i).Uint16()), nil
	case *array.Float32:
		return appendFloat(dst, float64(v.Value(i)), 32), nil
	case *array.Float64:
		return appendFloat(dst, v.Value(i), 64), nil
	case *array.String:
		return appendString(dst, v.Value(i)), nil
	case *array.LargeString:
		return appendString(dst, v.Value(i)), nil
	case *array.Binary:
		return appendB64(dst, v.Value(i)), nil
	case *array.LargeBinary:
		return appendB64(dst, v.Value(i)), nil
	case *array.FixedSizeBinary:
		return appendB64(dst, v.Value(i)), nil
	case *array.Date32:
		return appendDate(dst, int64(v.Value(i))), nil
	case *array.Date64:
		return appendDate(dst, floorDiv(int64(v.Value(i)), 86400000)), nil
	case *array.Timestamp:
		t := v.DataType().(*arrow.TimestampType)
		return appendTimestamp(dst, int64(v.Value(i)), t.Unit, t.TimeZone)
	case *array.Time32:
		return appendTime(dst, int64(v.Value(i)), v.DataType().(*arrow.Time32Type).Unit), nil
	case *array.Time64:
		return appendTime(dst, int64(v.Value(i)), v.DataType().(*arrow.Time64Type).Unit), nil
	case *array.Duration:
		return strconv.AppendInt(dst, int64(v.Value(i)), 10), nil
	case *array.Decimal128:
		n := v.Value(i)
		return appendDecimal(dst, n.BigInt(), v.DataType().(*arrow.Decimal128Type).Scale), nil
	case *array.Decimal256:
		n := v.Value(i)
		return appendDecimal(dst, n.BigInt(), v.DataType().(*arrow.Decimal256Type).Scale), nil
	case array.ListLike:
		lo, hi := v.ValueOffsets(i)
		dst = append(dst, '[')
		for k := lo; k < hi; k++ {
			if k > lo {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = AppendJSON(dst, v.ListValues(), int(k)); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case *array.Struct:
		t := v.DataType().(*arrow.StructType)
		dst = append(dst, '{')
		for k := 0; k < v.NumField(); k++ {
			if k > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, t.Field(k).Name)
			dst = append(dst, ':')
			var err error
			if dst, err = AppendJSON(dst, v.Field(k), i); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	case *array.Dictionary:
		return AppendJSON(dst, v.Dictionary(), v.GetValueIndex(i))
	}
	return nil, fmt.Errorf("cannot render %v as JSON", a.DataType())
}

// appendString appends s as a JSON string.
func appendString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return append(dst, b...)
}

func appendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	// ECMAScript's number format, as encoding/json writes it: plain
	// decimals, exponents only below 1e-6 and from 1e21 on.
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if n := len(dst); format == 'e' && n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
		dst[n-2] = dst[n-1] // e-07 -> e-7
		dst = dst[:n-1]
	}
	return dst
}

// appendHalf writes a float16 as the shortest decimal that rounds back to
// the same float16 (not to the same float32: 0.1 stays "0.1"). Half values
// have short exact decimals, so two shortest candidates tie often (16.125
// is "16.12" or "16.13"); like ECMAScript's toPrecision, the tie goes up.
func appendHalf(dst []byte, h uint16) []byte {
	f := halfToFloat(h)
	if math.IsNaN(f) || math.IsInf(f, 0) || f == 0 {
		return appendFloat(dst, f, 64)
	}
	// The exact decimal of a half fits in 40 digits.
	exact := strconv.FormatFloat(math.Abs(f), 'e', 40, 64)
	mant, expPart, _ := strings.Cut(exact, "e")
	digits := mant[:1] + mant[2:]
	exp, _ := strconv.Atoi(expPart)
	for p := 1; p <= 5; p++ {
		n, _ := strconv.ParseUint(digits[:p], 10, 64)
		if digits[p] >= '5' {
			n++ // half up, on the exact value
		}
		y, err := strconv.ParseFloat(strconv.FormatUint(n, 10)+"e"+strconv.Itoa(exp-p+1), 64)
		if err == nil && floatToHalf(math.Copysign(y, f)) == h {
			return appendFloat(dst, math.Copysign(y, f), 64)
		}
	}
	return appendFloat(dst, f, 64)
}

// floatToHalf rounds f to the nearest float16 (ties to even), as IEEE 754
// conversion does. Scaling by powers of two is exact, so one rounding
// happens, at the half's precision.
func floatToHalf(f float64) uint16 {
	var sign uint16
	if math.Signbit(f) {
		sign, f = 0x8000, -f
	}
	switch {
	case math.IsNaN(f):
		return 0x7e00
	case f >= 65520: // halfway between 65504 and 2^16 rounds to even: infinity
		return sign | 0x7c00
	case f < 0x1p-14: // subnormal (a result of 1024 is the smallest normal)
		return sign | uint16(math.RoundToEven(f*0x1p24))
	}
	frac, exp := math.Frexp(f) // f = frac * 2^exp, frac in [0.5, 1)
	m := math.RoundToEven((frac*2 - 1) * 1024)
	e := exp - 1 + 15
	if m == 1024 {
		m, e = 0, e+1
	}
	if e >= 31 {
		return sign | 0x7c00
	}
	return sign | uint16(e)<<10 | uint16(m)
}

func appendB64(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func appendDate(dst []byte, days int64) []byte {
	t := time.Unix(days*86400, 0).UTC()
	return append(append(dst, '"'), t.Format("2006-01-02")+`"`...)
}

// unitDigits is the number of fractional-second digits of a time unit.
func unitDigits(u arrow.TimeUnit) int { return 3 * int(u) }

func unitPer(u arrow.TimeUnit) int64 {
	return [...]int64{1, 1e3, 1e6, 1e9}[u]
}

func appendFrac(dst []byte, frac int64, digits int) []byte {
	if digits == 0 {
		return dst
	}
	s := strconv.FormatInt(frac, 10)
	dst = append(dst, '.')
	for k := len(s); k < digits; k++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

func appendTimestamp(dst []byte, v int64, u arrow.TimeUnit, tz string) ([]byte, error) {
	per := unitPer(u)
	sec, frac := floorDiv(v, per), v-floorDiv(v, per)*per
	t := time.Unix(sec, 0).UTC()
	if tz != "" {
		loc, err := timeZone(tz)
		if err != nil {
			return nil, err
		}
		t = t.In(loc)
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, "2006-01-02T15:04:05")
	dst = appendFrac(dst, frac, unitDigits(u))
	if tz != "" {
		dst = t.AppendFormat(dst, "Z07:00")
	}
	return append(dst, '"'), nil
}

// timeZone resolves an Arrow time zone: "UTC", a fixed offset "+hh:mm", or
// an IANA name.
func timeZone(tz string) (*time.Location, error) {
	if tz == "UTC" || tz == "Z" || tz == "+00:00" {
		return time.UTC, nil
	}
	if len(tz) == 6 && (tz[0] == '+' || tz[0] == '-') && tz[3] == ':' {
		h, err1 := strconv.Atoi(tz[1:3])
		m, err2 := strconv.Atoi(tz[4:6])
		if err1 == nil && err2 == nil {
			off := h*3600 + m*60
			if tz[0] == '-' {
				off = -off
			}
			return time.FixedZone(tz, off), nil
		}
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("time zone %q: %w", tz, err)
	}
	return loc, nil
}

func appendTime(dst []byte, v int64, u arrow.TimeUnit) []byte {
	per := unitPer(u)
	sec, frac := v/per, v%per
	dst = append(dst, '"')
	dst = fmt.Appendf(dst, "%02d:%02d:%02d", sec/3600, sec%3600/60, sec%60)
	dst = appendFrac(dst, frac, unitDigits(u))
	return append(dst, '"')
}

func appendDecimal(dst []byte, n *big.Int, scale int32) []byte {
	neg := n.Sign() < 0
	s := new(big.Int).Abs(n).String()
	if scale > 0 {
		for len(s) <= int(scale) {
			s = "0" + s
		}
		s = s[:len(s)-int(scale)] + "." + s[len(s)-int(scale):]
	} else if scale < 0 {
		for k := int32(0); k < -scale; k++ {
			s += "0"
		}
	}
	dst = append(dst, '"')
	if neg {
		dst = append(dst, '-')
	}
	return append(append(dst, s...), '"')
}

// halfToFloat converts IEEE 754 half-precision bits exactly (subnormals
// included).
func halfToFloat(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e, f := int(h>>10&0x1f), float64(h&0x3ff)
	switch e {
	case 0:
		return sign * math.Ldexp(f, -24)
	case 31:
		if f != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(1+f/1024, e-15)
}
