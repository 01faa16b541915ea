package sqlexpr

import (
	"errors"
	"strings"
	"testing"
)

var fuzzExprSeeds = []string{
	"kind = 'purchase' AND amount > 10",
	"upper(name) || '!'",
	"CASE WHEN a > 1 THEN 'x' WHEN a IS NULL THEN NULL ELSE 'y' END",
	"CAST(a AS DOUBLE) * 1.5",
	"st.a.b[1] NOT BETWEEN -1 AND +2e3",
	"`order item` IN (1, 2, 3) OR x NOT LIKE 'a%' ESCAPE '!'",
	"EXTRACT(year FROM ts) IS DISTINCT FROM 2024",
	"TRIM(LEADING 'x' FROM name)",
	"SUBSTRING(name FROM 2 FOR 3)",
	"date_trunc('day', TIMESTAMP '2024-01-01 00:00:00')",
	"a::BIGINT % 3",
	"((((a))))",
	"NOT NOT NOT flag IS NOT TRUE",
	"'it''s' || \"q\"",
	"\"na\"\"me\" = 'x' AND \"st\".a > 1 AND st.\"b\" IS NULL",
	"array_has_any(tags, ['a', NULL]) OR [1, -2][1] = 1",
	"u64 > 18446744073709551615 AND -9223372036854775808 < 0",
	"(u64 + i64) * 2 % 7 >= i64 - u64 OR u64 - 1 < 0",
}

// FuzzParse checks that the expression parser never panics or hangs and
// that what it accepts prints as SQL that parses back to the same text.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzExprSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkRoundTrip(t, src, ParseProjection)
		checkRoundTrip(t, src, ParseFilter)
	})
}

// checkRoundTrip parses src with parse and checks the error position, or
// that the printed form parses back (with the same dialect) to itself.
func checkRoundTrip(t *testing.T, src string, parse func(string) (Expr, error)) {
	t.Helper()
	{
		e, err := parse(src)
		if err != nil {
			var pe *PosError
			if !errors.As(err, &pe) {
				t.Fatalf("error without position: %v", err)
			}
			if pe.Pos < 0 || pe.Pos > len(src) {
				t.Fatalf("position %d outside input of %d bytes", pe.Pos, len(src))
			}
			return
		}
		printed := e.String()
		again, err := parse(printed)
		if err != nil {
			t.Fatalf("printed form %q of %q does not parse: %v", printed, src, err)
		}
		if again.String() != printed {
			t.Fatalf("round trip changed %q to %q", printed, again.String())
		}
	}
}

// FuzzParseStatement checks that the statement parser never panics.
func FuzzParseStatement(f *testing.F) {
	for _, s := range []string{
		"CREATE MATERIALIZED VIEW v AS SELECT id, upper(name) AS shout FROM src WHERE age >= 18 LIMIT 10",
		"CREATE MATERIALIZED VIEW `v 1` AS SELECT * FROM src;",
		"REFRESH MATERIALIZED VIEW v WITH (full = true, source_version = 3, cpu_millis = 100, memory_bytes = 1, gpu_count = 0, gpu_class = 'a100')",
		"DROP MATERIALIZED VIEW IF EXISTS v",
		"SHOW MATERIALIZED VIEWS",
		"REFRESH MATERIALIZED VIEW v WITH (async = true, full = false)",
		"CREATE MATERIALIZED VIEW IF NOT EXISTS v WITH (auto_refresh_enabled = true, auto_refresh_interval_seconds = 30, freshness_target_ms = 500, debounce_ms = 20) AS SELECT * FROM src",
		"ALTER MATERIALIZED VIEW v SET (auto_refresh_enabled = false, debounce_ms = 0)",
		"DESCRIBE MATERIALIZED VIEW `v`",
		"SHOW JOBS;",
		"DESCRIBE JOB j_1",
		"CANCEL JOB 'j-1'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		st, err := ParseStatement(src)
		if err == nil && st == nil {
			t.Fatal("nil statement without error")
		}
		if err != nil && !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrUnsupported) {
			t.Fatalf("error %v is not ErrSyntax/ErrUnsupported", err)
		}
		var pe *PosError
		if err != nil && (!errors.As(err, &pe) || pe.Pos < 0 || pe.Pos > len(src)) {
			t.Fatalf("error %v names no position within the %d bytes of the statement", err, len(src))
		}
		// Every option given has its position, at its name.
		at := map[string]int{}
		switch s := st.(type) {
		case *RefreshView:
			at = s.At
		case *CreateView:
			at = s.Policy.At
		case *AlterView:
			at = s.Policy.At
		}
		for k, p := range at {
			if p < 0 || p+len(k) > len(src) || !strings.EqualFold(src[p:p+len(k)], k) {
				t.Fatalf("option %s at %d of %q", k, p, src)
			}
		}
	})
}
