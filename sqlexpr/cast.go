package sqlexpr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// castValue converts the non-NULL row value v from type from to type to
// with SQL CAST semantics: out-of-range numbers and unparsable strings
// are errors.
func castValue(v any, from, to arrow.DataType) (any, error) {
	if v == nil || arrow.TypeEqual(from, to) {
		return v, nil
	}
	if isList(from) && isList(to) && arrow.TypeEqual(from.(arrow.ListLikeType).Elem(), to.(arrow.ListLikeType).Elem()) {
		return v, nil // the same values; only the element field differs
	}
	fail := func() (any, error) {
		return nil, fmt.Errorf("%w: cannot cast %s from %s to %s", ErrEval, oneLine(fmt.Sprint(v)), from, to)
	}
	switch {
	case isString(to):
		return formatValue(v, from)
	case to.ID() == arrow.BOOL:
		switch x := v.(type) {
		case int64:
			return x != 0, nil
		case uint64:
			return x != 0, nil
		case float64:
			return x != 0, nil
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "true", "t", "yes", "y", "1", "on":
				return true, nil
			case "false", "f", "no", "n", "0", "off":
				return false, nil
			}
		}
		return fail()
	case isSigned(to):
		var i int64
		switch x := v.(type) {
		case bool:
			if x {
				i = 1
			}
		case int64:
			i = x
		case uint64:
			if x > math.MaxInt64 {
				return fail()
			}
			i = int64(x)
		case float64:
			if math.IsNaN(x) || x >= 9.223372036854775807e18 || x < -9.223372036854775808e18 {
				return fail()
			}
			i = int64(x) // truncates toward zero, like Arrow's cast
		case string:
			p, err := strconv.ParseInt(x, 10, 64)
			if err != nil {
				return fail()
			}
			i = p
		default:
			return fail()
		}
		if isTemporal(from) && to.ID() == arrow.INT64 {
			return i, nil
		}
		if !fitsInt(i, to.ID()) {
			return fail()
		}
		return i, nil
	case isUnsigned(to):
		var u uint64
		switch x := v.(type) {
		case bool:
			if x {
				u = 1
			}
		case int64:
			if x < 0 {
				return fail()
			}
			u = uint64(x)
		case uint64:
			u = x
		case float64:
			if math.IsNaN(x) || x < 0 || x >= 1.8446744073709552e19 {
				return fail()
			}
			u = uint64(x)
		case string:
			p, err := strconv.ParseUint(x, 10, 64)
			if err != nil {
				return fail()
			}
			u = p
		default:
			return fail()
		}
		if !fitsUint(u, to.ID()) {
			return fail()
		}
		return u, nil
	case isFloat(to):
		single := to.ID() == arrow.FLOAT32
		var f float64
		switch x := v.(type) {
		case bool:
			if x {
				f = 1
			}
		case int64:
			// Round once, straight to the target precision.
			if f = float64(x); single {
				f = float64(float32(x))
			}
		case uint64:
			if f = float64(x); single {
				f = float64(float32(x))
			}
		case float64:
			f = x
		case string:
			p, err := strconv.ParseFloat(x, 64)
			if err != nil {
				return fail()
			}
			if f = p; p != p {
				f = posNaN // Rust's f64::NAN; Go's NaN carries a payload
			}
		default:
			return fail()
		}
		if to.ID() == arrow.FLOAT32 {
			f = float64(float32(f))
		}
		return f, nil
	case to.ID() == arrow.DATE32:
		switch x := v.(type) {
		case string:
			d, err := parseDate(x)
			if err != nil {
				return fail()
			}
			return d, nil
		case int64:
			if from.ID() == arrow.TIMESTAMP {
				per := unitsPerSecond(from.(*arrow.TimestampType).Unit) * 86400
				return floorDiv(x, per), nil
			}
			if isSigned(from) && intWidth(from) == 32 {
				return x, nil
			}
		}
		return fail()
	case to.ID() == arrow.TIMESTAMP:
		unit := to.(*arrow.TimestampType).Unit
		switch x := v.(type) {
		case string:
			t, err := parseTimestamp(x, unit)
			if err != nil {
				return fail()
			}
			return t, nil
		case int64:
			switch from.ID() {
			case arrow.DATE32:
				return x * 86400 * unitsPerSecond(unit), nil
			case arrow.TIMESTAMP:
				return convertUnit(x, from.(*arrow.TimestampType).Unit, unit), nil
			case arrow.INT64, arrow.INT32, arrow.INT16, arrow.INT8:
				return x, nil
			}
		}
		return fail()
	case to.ID() == arrow.BINARY:
		if s, ok := v.(string); ok {
			return []byte(s), nil
		}
		return fail()
	}
	return fail()
}

// formatValue renders a value as text the way Arrow's cast to Utf8 does.
func formatValue(v any, from arrow.DataType) (any, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case float64:
		return formatFloat(x, from.ID() == arrow.FLOAT32), nil
	case []byte:
		return string(x), nil
	case []any:
		// Arrow's list display: "[a, b]", NULL elements as empty text.
		lt, ok := from.(arrow.ListLikeType)
		if !ok {
			break
		}
		parts := make([]string, len(x))
		for i, e := range x {
			if e == nil {
				continue
			}
			s, err := formatValue(e, lt.Elem())
			if err != nil {
				return nil, err
			}
			parts[i] = s.(string)
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	case int64:
		switch from.ID() {
		case arrow.DATE32:
			return time.Unix(x*86400, 0).UTC().Format("2006-01-02"), nil
		case arrow.TIMESTAMP:
			ts := from.(*arrow.TimestampType)
			s := formatTimestamp(x, ts.Unit)
			switch ts.TimeZone {
			case "":
			case "UTC", "utc", "Z":
				s += "Z"
			default:
				loc, err := loadZone(ts.TimeZone)
				if err != nil {
					return nil, err
				}
				return formatZoned(x, ts.Unit, ts.TimeZone, loc), nil
			}
			return s, nil
		}
		return strconv.FormatInt(x, 10), nil
	}
	return nil, fmt.Errorf("%w: cannot cast %s to a string", ErrEval, from)
}

// formatFloat writes the shortest text that reads back as f, with a
// ".0" on integral values, as Arrow's float-to-string cast does.
func formatFloat(f float64, single bool) string {
	bits := 64
	if single {
		bits = 32
	}
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	a := math.Abs(f)
	if a != 0 && (a >= 1e16 || a < 1e-5) {
		s := strconv.FormatFloat(f, 'e', -1, bits)
		mant, exp, _ := strings.Cut(s, "e")
		e, _ := strconv.Atoi(exp)
		return mant + "e" + strconv.Itoa(e)
	}
	s := strconv.FormatFloat(f, 'f', -1, bits)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

func unitsPerSecond(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return 1
	case arrow.Millisecond:
		return 1e3
	case arrow.Microsecond:
		return 1e6
	}
	return 1e9
}

func convertUnit(v int64, from, to arrow.TimeUnit) int64 {
	f, t := unitsPerSecond(from), unitsPerSecond(to)
	if f == t {
		return v
	}
	if t > f {
		return v * (t / f)
	}
	return floorDiv(v, f/t)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// parseDate reads YYYY-MM-DD into days since the epoch.
func parseDate(s string) (int64, error) {
	t, err := time.Parse("2006-01-02", strings.TrimSpace(s))
	if err != nil {
		return 0, err
	}
	return floorDiv(t.Unix(), 86400), nil
}

// parseTimestamp reads an ISO-8601-like timestamp (date, optional time
// with fraction, optional zone) into ticks of unit since the epoch.
func parseTimestamp(s string, unit arrow.TimeUnit) (int64, error) {
	// With an offset or zone the instant, else the clock time: either
	// way the UTC clock time, as DataFusion's zone-less TIMESTAMP holds.
	t, _, err := parseTimestampText(s)
	if err != nil {
		return 0, fmt.Errorf("%w: cannot parse %q as a timestamp", ErrEval, oneLine(s))
	}
	return convertUnit(t.Unix()*1e9+int64(t.Nanosecond()), arrow.Nanosecond, unit), nil
}

// formatTimestamp renders ticks like Arrow's timestamp-to-string cast:
// "2024-01-01T00:00:00" with a fraction only when non-zero.
func formatTimestamp(v int64, unit arrow.TimeUnit) string {
	per := unitsPerSecond(unit)
	sec := floorDiv(v, per)
	frac := v - sec*per
	t := time.Unix(sec, frac*(1e9/per)).UTC()
	s := t.Format("2006-01-02T15:04:05")
	if frac != 0 {
		// Like chrono's "%.f": the shortest of 3, 6 or 9 digits.
		ns := frac * (1e9 / per)
		switch {
		case ns%1e6 == 0:
			s += fmt.Sprintf(".%03d", ns/1e6)
		case ns%1e3 == 0:
			s += fmt.Sprintf(".%06d", ns/1e3)
		default:
			s += fmt.Sprintf(".%09d", ns)
		}
	}
	return s
}
