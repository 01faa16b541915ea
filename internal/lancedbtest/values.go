package lancedbtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"
)

// Record is one row to write: column name → Go value. Integers of any width
// are sent exactly (as decimal text, which the driver converts by column
// type); float NaN and ±Inf are allowed; time.Time becomes RFC 3339 with
// nanoseconds (give it in UTC for zone-less timestamp columns); []byte
// becomes base64 for binary columns; slices are lists, maps structs; nil
// and a missing key are null.
type Record map[string]any

// Row is one row LanceDB read: column name → the value's exact JSON text
// (64-bit integers exact, floats shortest round-trip, "NaN"/"Infinity" as
// strings, timestamps RFC 3339, binary base64), as in the fixture answers
// files and arrowjson. Special columns (_rowid, …) appear when asked for.
type Row map[string]json.RawMessage

// RowID returns the row's _rowid (read with RowID or Special).
func (r Row) RowID() (uint64, error) { return r.Uint64("_rowid") }

// Uint64 returns column c as an exact unsigned integer.
func (r Row) Uint64(c string) (uint64, error) {
	v, ok := r[c]
	if !ok {
		return 0, fmt.Errorf("row has no column %q", c)
	}
	return strconv.ParseUint(string(v), 10, 64)
}

// Int64 returns column c as an exact signed integer.
func (r Row) Int64(c string) (int64, error) {
	v, ok := r[c]
	if !ok {
		return 0, fmt.Errorf("row has no column %q", c)
	}
	return strconv.ParseInt(string(v), 10, 64)
}

// IsNull reports whether column c is present and null.
func (r Row) IsNull(c string) bool {
	v, ok := r[c]
	return ok && string(v) == "null"
}

// Text returns column c's JSON text ("" when absent).
func (r Row) Text(c string) string { return string(r[c]) }

// Decode decodes column c into dst (with json.Number for numbers).
func (r Row) Decode(c string, dst any) error {
	v, ok := r[c]
	if !ok {
		return fmt.Errorf("row has no column %q", c)
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	return dec.Decode(dst)
}

// Key returns a canonical text of the row over the given columns (all, in
// sorted order, when none are given), for comparing rows as multisets.
func (r Row) Key(cols ...string) string {
	if len(cols) == 0 {
		cols = sortedKeys(r)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(c)
		b.Write(k)
		b.WriteByte(':')
		if v, ok := r[c]; ok {
			b.Write(v)
		} else {
			b.WriteString("null")
		}
	}
	b.WriteByte('}')
	return b.String()
}

func encodeRows(rows []Record) []any {
	out := make([]any, len(rows))
	for i, r := range rows {
		out[i] = encodeValue(map[string]any(r))
	}
	return out
}

// encodeValue maps a Go value to what driver.mjs reads exactly.
func encodeValue(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case json.RawMessage:
		return x
	case json.Number:
		if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return string(x)
		}
		if _, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return string(x)
		}
		f, _ := x.Float64()
		return encodeValue(f)
	case time.Time:
		return x.Format("2006-01-02T15:04:05.999999999Z07:00")
	case []byte:
		return x
	case Record:
		return encodeValue(map[string]any(x))
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(rv.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		switch {
		case math.IsNaN(f):
			return "NaN"
		case math.IsInf(f, 1):
			return "Infinity"
		case math.IsInf(f, -1):
			return "-Infinity"
		}
		if rv.Kind() == reflect.Float32 {
			// The shortest text of the float32, which the driver stores
			// back into a float32 exactly.
			return json.Number(strconv.FormatFloat(f, 'g', -1, 32))
		}
		return f
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil
		}
		return encodeValue(rv.Elem().Interface())
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return nil
		}
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = encodeValue(rv.Index(i).Interface())
		}
		return out
	case reflect.Map:
		if rv.IsNil() {
			return nil
		}
		out := make(map[string]any, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			out[fmt.Sprint(it.Key().Interface())] = encodeValue(it.Value().Interface())
		}
		return out
	}
	return v
}

// jsonText is v as compact JSON text.
func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
