package sqlexpr

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestExtensions covers SQL that LanceDB 0.39 refuses and sqlexpr
// accepts with standard semantics (see extensions.go). LanceDB cannot be
// the oracle here, so the expected values are the SQL-standard answers
// for smallBatch's four rows (row 3 holds NULLs).
func TestExtensions(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := smallBatch(mem)
	defer rec.Release()
	year := func(days int) string { return itoa(time.Unix(int64(days)*86400, 0).UTC().Year()) }
	cases := []struct {
		src  string
		typ  arrow.DataType
		want []string
	}{
		{"CASE WHEN i64 > 0 THEN 'pos' WHEN i64 = 0 THEN 'zero' ELSE 'neg' END", tUtf8, []string{"neg", "zero", "pos", "neg"}},
		{"CASE i64 WHEN 1 THEN 10 END", tInt64, []string{"(null)", "(null)", "10", "(null)"}},
		// Branches are lazy: 10 / 0 is never computed.
		{"CASE WHEN i64 = 0 THEN 0 ELSE 10 / i64 END", tInt64, []string{"-10", "0", "10", "(null)"}},
		{"CASE WHEN flag THEN f32 ELSE i8 END", tFloat32, []string{"-1.5", "-40", "0.5", "(null)"}},
		{"substr(name, 2, 2)", tUtf8, []string{"", "b%", "nï", "(null)"}},
		{"SUBSTRING(name FROM 0 FOR 2)", tUtf8, []string{"", "a", "Ü", "(null)"}},
		{"SUBSTR(name, 3)", tUtf8, []string{"", "%_", "ï", "(null)"}},
		{"TRIM(BOTH 'a' FROM name)", tUtf8, []string{"", "b%_", "Ünï", "(null)"}},
		{"TRIM(LEADING 'Ü' FROM name)", tUtf8, []string{"", "ab%_", "nï", "(null)"}},
		{"TRIM('  x  ')", tUtf8, []string{"x", "x", "x", "x"}},
		{"ceil(f32)", tFloat32, []string{"-1", "-0", "1", "(null)"}},
		{"floor(f64)", tFloat64, []string{"0", "-1", "1e+300", "(null)"}},
		{"ceil(i64)", tFloat64, []string{"-1", "0", "1", "(null)"}},
		{"EXTRACT(year FROM d)", tInt32, []string{year(18923), year(19323), year(19723), "(null)"}},
		{"EXTRACT(hour FROM ts)", tInt32, []string{"23", "0", "0", "(null)"}},
		{"i64 IS DISTINCT FROM 0", tBool, []string{"true", "false", "true", "true"}},
		{"i64 IS NOT DISTINCT FROM NULL", tBool, []string{"false", "false", "false", "true"}},
		{"CAST(i64 AS VARCHAR)", tUtf8, []string{"-1", "0", "1", "(null)"}},
		{"CAST(i64 AS TEXT) || 'x'", tUtf8, []string{"-1x", "0x", "1x", "(null)"}},
		{"TRY_CAST(name AS INT)", tInt32, []string{"(null)", "(null)", "(null)", "(null)"}},
		{"TRY_CAST(i64 AS TINYINT UNSIGNED)", arrow.PrimitiveTypes.Uint8, []string{"(null)", "0", "1", "(null)"}},
		{"i64::STRING", tUtf8, []string{"-1", "0", "1", "(null)"}},
	}
	for _, c := range cases {
		typ, got := evalStrings(t, mem, rec, c.src)
		if !arrow.TypeEqual(typ, c.typ) || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s = %s %q, want %s %q", c.src, typ, got, c.typ, c.want)
		}
	}
}

// TestNullSemantics pins the three-valued logic and NULL handling of the
// operators on both evaluation paths.
func TestNullSemantics(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := smallBatch(mem)
	defer rec.Release()
	cases := []struct {
		src  string
		want []string
	}{
		{"flag AND i64 > 0", []string{"false", "false", "true", "(null)"}},
		{"NULL AND false", []string{"false", "false", "false", "false"}},
		{"NULL AND true", []string{"(null)", "(null)", "(null)", "(null)"}},
		{"NULL OR true", []string{"true", "true", "true", "true"}},
		{"i64 > 0 OR flag", []string{"true", "false", "true", "(null)"}},
		{"NOT (i64 > 0)", []string{"true", "true", "false", "(null)"}},
		{"i64 IN (1, NULL)", []string{"(null)", "(null)", "true", "(null)"}},
		{"i64 NOT IN (1, 5)", []string{"true", "true", "false", "(null)"}},
		{"concat(name, NULL, 'x')", []string{"x", "ab%_x", "Ünïx", "x"}},
		{"name || NULL", []string{"(null)", "(null)", "(null)", "(null)"}},
		{"i64 + NULL", []string{"(null)", "(null)", "(null)", "(null)"}},
		{"flag IS NOT TRUE", []string{"false", "true", "false", "true"}},
		{"greatest(i64, NULL, 0)", []string{"0", "0", "1", "0"}},
		{"i32 + 2147483647", []string{"47", "1000000047", "2000000047", "(null)"}},
		{"-i8", []string{"100", "40", "-20", "(null)"}},
		{"name LIKE 'ab\\%\\_'", []string{"false", "true", "false", "(null)"}},
		{"name LIKE 'ab!%!_' ESCAPE '!'", []string{"false", "true", "false", "(null)"}},
		{"name ILIKE 'üNÏ'", []string{"false", "false", "true", "(null)"}},
		{"f64 IN (CAST('NaN' AS DOUBLE), 3)", []string{"false", "false", "false", "(null)"}},
		// 0/0 is the NaN with the sign bit set, 'NaN' the one without.
		{"f64 / 0 IN (CAST('NaN' AS DOUBLE))", []string{"false", "false", "false", "(null)"}},
		{"f64 / 0 IN (sqrt(-1.0))", []string{"true", "false", "false", "(null)"}},
	}
	for _, c := range cases {
		_, got := evalStrings(t, mem, rec, c.src)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s = %q, want %q", c.src, got, c.want)
		}
	}
}

// TestErrorsAreOneBoundedLine checks that no error prints more than one
// line, echoes the generated row program, or quotes unbounded input.
func TestErrorsAreOneBoundedLine(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := smallBatch(mem)
	defer rec.Release()
	long := strings.Repeat("x", 100000)
	bigCase := "CASE " + strings.Repeat("WHEN i64 = 7 THEN 'a' ", 4000) + "ELSE 'b' END"
	for _, src := range []string{
		"1/0",
		"i64 / (i64 - i64)",
		"CAST('x' AS INT)",
		bigCase + " || CAST(name AS INT)",
		"'" + long + "' +",
		"i64 = '" + long + "\n'",
		"`" + long + "` > 1",
		"nosuch(" + strings.Repeat("i64, ", 5000) + "1)",
		"'a\nb' 'c'",
	} {
		c, err := CompileSQL(src, rec.Schema())
		if err == nil {
			var arr arrow.Array
			if arr, err = c.EvalWith(mem, rec); err == nil {
				arr.Release()
			}
		}
		if err == nil {
			t.Errorf("%.40q: no error", src)
			continue
		}
		msg := err.Error()
		if strings.ContainsAny(msg, "\n\r") || len(msg) > 400 || strings.Contains(msg, "f0(") || strings.Contains(msg, "sqlexpr: sqlexpr") || strings.Count(msg, "sqlexpr:") > 1 {
			t.Errorf("%.40q: error %d bytes: %.500q", src, len(msg), msg)
		}
	}
	// A CASE of thousands of branches is evaluated, not refused.
	c, err := CompileSQL(bigCase, rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	arr, err := c.EvalWith(mem, rec)
	if err != nil {
		t.Fatal(err)
	}
	arr.Release()
}
