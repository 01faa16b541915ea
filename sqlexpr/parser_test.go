package sqlexpr

import (
	"errors"
	"testing"
)

func TestParsePrintsCanonicalSQL(t *testing.T) {
	cases := []struct{ src, want string }{
		{"a", "a"},
		{"`my col`", "`my col`"},
		{"`a``b`", "`a``b`"},
		{"st.a.b", "st.a.b"},
		{"tags[1]", "(tags)[1]"},
		{"1 + 2 * 3", "(1 + (2 * 3))"},
		{"(1 + 2) * 3", "((1 + 2) * 3)"},
		{"a - b - c", "((a - b) - c)"},
		{"-a * 2", "((-a) * 2)"},
		{"a = 1 AND b <> 2 OR c", "(((a = 1) AND (b <> 2)) OR c)"},
		{"a != 2", "(a <> 2)"},
		{"a == 2", "(a = 2)"},
		{"NOT a = 1 AND b", "((NOT (a = 1)) AND b)"},
		{"a || 'x' || b", "((a || 'x') || b)"},
		{"a IN (1, 2)", "(a IN (1, 2))"},
		{"a NOT IN ('x')", "(a NOT IN ('x'))"},
		{"a BETWEEN 1 AND 2 AND b", "((a BETWEEN 1 AND 2) AND b)"},
		{"a NOT BETWEEN 1 AND 2", "(a NOT BETWEEN 1 AND 2)"},
		{"a LIKE 'x%'", "(a LIKE 'x%')"},
		{"a NOT ILIKE 'x%' ESCAPE '!'", "(a NOT ILIKE 'x%' ESCAPE '!')"},
		{"a IS NULL", "(a IS NULL)"},
		{"a IS NOT TRUE", "(a IS NOT TRUE)"},
		{"a IS FALSE", "(a IS FALSE)"},
		{"a IS DISTINCT FROM b", "(a IS DISTINCT FROM b)"},
		{"a IS NOT DISTINCT FROM 1", "(a IS NOT DISTINCT FROM 1)"},
		{"CAST(a AS double precision)", "CAST(a AS DOUBLE PRECISION)"},
		{"CAST(a AS varchar(10))", "CAST(a AS VARCHAR)"},
		{"a::bigint", "CAST(a AS BIGINT)"},
		{"TRY_CAST(a AS int unsigned)", "TRY_CAST(a AS INT UNSIGNED)"},
		{"CASE WHEN a THEN 1 ELSE 2 END", "CASE WHEN a THEN 1 ELSE 2 END"},
		{"case a when 1 then 'x' end", "CASE a WHEN 1 THEN 'x' END"},
		{"Upper(name)", "upper(name)"},
		{"count(*)", "count(*)"},
		{"pi()", "pi()"},
		{"EXTRACT(YEAR FROM ts)", "date_part('year', ts)"},
		{"TRIM(name)", "btrim(name)"},
		{"TRIM(BOTH 'x' FROM name)", "btrim(name, 'x')"},
		{"TRIM(LEADING FROM name)", "ltrim(name)"},
		{"TRIM(TRAILING 'y' FROM name)", "rtrim(name, 'y')"},
		{"SUBSTRING(name FROM 2 FOR 3)", "substr(name, 2, 3)"},
		{"substr(name, 2)", "substr(name, 2)"},
		{"DATE '2024-01-01'", "DATE '2024-01-01'"},
		{"TIMESTAMP '2024-01-01 10:00:00'", "TIMESTAMP '2024-01-01 10:00:00'"},
		{"'it''s'", "'it''s'"},
		{`"dq"`, `"dq"`},
		{`"a""b" || 'c'`, `("a""b" || 'c')`},
		{"Mixed", "Mixed"},
		{"`Mixed`", "`Mixed`"},
		{"1.5e3", "1.5e3"},
		{".5", ".5"},
		{"true AND FALSE", "(TRUE AND FALSE)"},
		{"null", "NULL"},
		{"select + 1", "(select + 1)"},
		{"a -- comment\n + 1", "(a + 1)"},
		{"date", "date"},
		{"f(x).a", "get_field(f(x), 'a')"},
	}
	for _, c := range cases {
		e, err := Parse(c.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.src, err)
			continue
		}
		if got := e.String(); got != c.want {
			t.Errorf("Parse(%q) = %s, want %s", c.src, got, c.want)
		}
	}
}

func TestParseErrorsCarryPositionAndExpectation(t *testing.T) {
	cases := []struct {
		src  string
		kind error
		pos  int
		msg  string
	}{
		{"", ErrSyntax, 0, "expected an expression, found end of input"},
		{"a +", ErrSyntax, 3, "expected an expression, found end of input"},
		{"(a", ErrSyntax, 2, `expected ")", found end of input`},
		{"a b", ErrSyntax, 2, `expected end of expression, found "b"`},
		{"'open", ErrSyntax, 0, "unterminated quoted text, expected closing '"},
		{"a # b", ErrSyntax, 2, `unexpected character '#'`},
		{"CAST(a b)", ErrSyntax, 7, `expected AS, found "b"`},
		{"CASE a END", ErrSyntax, 7, `expected WHEN, found "END"`},
		{"a BETWEEN 1 OR 2", ErrSyntax, 12, `expected AND, found "OR"`},
		{"a IS 5", ErrSyntax, 5, "expected NULL, TRUE, FALSE, UNKNOWN or DISTINCT FROM after IS"},
		{"a IN ()", ErrSyntax, 2, "IN needs at least one value"},
		{"INTERVAL '1 day'", ErrUnsupported, 0, "INTERVAL literals are not supported"},
		{"st.`1`.2", ErrSyntax, 6, `expected end of expression, found ".2"`},
		{"a.", ErrSyntax, 2, "expected a field name after '.'"},
	}
	for _, c := range cases {
		_, err := Parse(c.src)
		var pe *PosError
		if !errors.As(err, &pe) || !errors.Is(err, c.kind) {
			t.Errorf("Parse(%q) error %v, want %v", c.src, err, c.kind)
			continue
		}
		if pe.Pos != c.pos || !contains(pe.Msg, c.msg) {
			t.Errorf("Parse(%q) = %d %q, want %d %q", c.src, pe.Pos, pe.Msg, c.pos, c.msg)
		}
	}
}

func TestParseRefusesDeepNesting(t *testing.T) {
	src := ""
	for i := 0; i < 1000; i++ {
		src += "("
	}
	if _, err := Parse(src + "1"); !errors.Is(err, ErrSyntax) {
		t.Fatalf("deep nesting: %v", err)
	}
	src = ""
	for i := 0; i < 1000; i++ {
		src += "-"
	}
	if _, err := Parse(src + "1"); !errors.Is(err, ErrSyntax) {
		t.Fatalf("deep unary chain: %v", err)
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && indexOf(s, sub) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
