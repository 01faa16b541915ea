package sqlexpr

import (
	"errors"
	"reflect"
	"testing"
)

func u64(v uint64) *uint64 { return &v }
func str(v string) *string { return &v }

func TestParseStatement(t *testing.T) {
	cases := []struct {
		src  string
		want Statement
	}{
		{"SHOW MATERIALIZED VIEWS", &ShowViews{}},
		{"show materialized views;", &ShowViews{}},
		{"DROP MATERIALIZED VIEW v", &DropView{Name: "v"}},
		{"DROP MATERIALIZED VIEW IF EXISTS `my view`", &DropView{Name: "my view", IfExists: true}},
		{"REFRESH MATERIALIZED VIEW v", &RefreshView{Name: "v"}},
		{"REFRESH MATERIALIZED VIEW v WITH (full = true)", &RefreshView{Name: "v", Full: true}},
		{
			"REFRESH MATERIALIZED VIEW v WITH (full = false, source_version = 7, cpu_millis = 1500, memory_bytes = 1073741824, gpu_count = 2, gpu_class = 'a100')",
			&RefreshView{Name: "v", SourceVersion: u64(7), CPUMillis: u64(1500), MemoryBytes: u64(1073741824), GPUCount: u64(2), GPUClass: str("a100")},
		},
	}
	for _, c := range cases {
		got, err := ParseStatement(c.src)
		if err != nil {
			t.Errorf("ParseStatement(%q): %v", c.src, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseStatement(%q) = %+v, want %+v", c.src, got, c.want)
		}
	}
}

func TestParseCreateView(t *testing.T) {
	st, err := ParseStatement("CREATE MATERIALIZED VIEW adults AS SELECT name, upper(name) AS shout, age + 1 next_age, st.a, `order item` FROM people WHERE age >= 18 AND kind = 'x' LIMIT 10;")
	if err != nil {
		t.Fatal(err)
	}
	cv, ok := st.(*CreateView)
	if !ok {
		t.Fatalf("got %T", st)
	}
	if cv.Name != "adults" || cv.Source != "people" || cv.Limit == nil || *cv.Limit != 10 {
		t.Fatalf("got %+v", cv)
	}
	if cv.FilterSQL != "age >= 18 AND kind = 'x'" || cv.Filter.String() != "((age >= 18) AND (kind = 'x'))" {
		t.Fatalf("filter %q / %s", cv.FilterSQL, cv.Filter)
	}
	var outs, sqls []string
	for _, p := range cv.Projections {
		outs = append(outs, p.Output)
		sqls = append(sqls, p.SQL)
	}
	if want := []string{"name", "shout", "next_age", "a", "order item"}; !reflect.DeepEqual(outs, want) {
		t.Errorf("outputs %q, want %q", outs, want)
	}
	if want := []string{"name", "upper(name)", "age + 1", "st.a", "`order item`"}; !reflect.DeepEqual(sqls, want) {
		t.Errorf("sql %q, want %q", sqls, want)
	}

	st, err = ParseStatement("create materialized view v as select * from src")
	if err != nil {
		t.Fatal(err)
	}
	if cv := st.(*CreateView); len(cv.Projections) != 0 || cv.Filter != nil || cv.Limit != nil {
		t.Fatalf("SELECT *: %+v", cv)
	}
	st, err = ParseStatement("CREATE MATERIALIZED VIEW v AS SELECT a FROM s LIMIT 9223372036854775807")
	if err != nil || *st.(*CreateView).Limit != 1<<63-1 {
		t.Fatalf("max limit: %v", err)
	}
}

func TestParseStatementErrors(t *testing.T) {
	cases := []struct {
		src string
		pos int
	}{
		{"", 0},
		{"SELECT 1", 0},
		{"CREATE VIEW v AS SELECT a FROM s", 7},
		{"CREATE MATERIALIZED VIEW v AS SELECT a", 38},
		{"CREATE MATERIALIZED VIEW v AS SELECT a FROM s LIMIT -1", 52},
		{"CREATE MATERIALIZED VIEW v AS SELECT a FROM s LIMIT 9223372036854775808", 52},
		{"CREATE MATERIALIZED VIEW v AS SELECT a FROM s LIMIT 1.5", 52},
		{"CREATE MATERIALIZED VIEW v AS SELECT a FROM s WHERE", 51},
		{"REFRESH MATERIALIZED VIEW v WITH (fast = true)", 34},
		{"REFRESH MATERIALIZED VIEW v WITH (full = 1)", 41},
		{"REFRESH MATERIALIZED VIEW v WITH (full = true, full = false)", 47},
		{"REFRESH MATERIALIZED VIEW v WITH (source_version = -1)", 51},
		{"REFRESH MATERIALIZED VIEW v WITH (gpu_class = 3)", 46},
		{"REFRESH MATERIALIZED VIEW v WITH (full = true", 45},
		{"DROP MATERIALIZED VIEW IF v", 26},
		{"SHOW MATERIALIZED VIEWS extra", 24},
	}
	for _, c := range cases {
		_, err := ParseStatement(c.src)
		var pe *PosError
		if !errors.As(err, &pe) || !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseStatement(%q) error %v, want a syntax error", c.src, err)
			continue
		}
		if pe.Pos != c.pos {
			t.Errorf("ParseStatement(%q) at %d (%s), want %d", c.src, pe.Pos, pe.Msg, c.pos)
		}
	}
}

func TestParseSelectList(t *testing.T) {
	got, err := ParseSelectList("id, user, amount * 100 AS amount_cents, concat(a, 'x')")
	if err != nil {
		t.Fatal(err)
	}
	var outs []string
	for _, p := range got {
		outs = append(outs, p.Output)
	}
	if want := []string{"id", "user", "amount_cents", "concat(a, 'x')"}; !reflect.DeepEqual(outs, want) {
		t.Fatalf("outputs %q, want %q", outs, want)
	}
	if _, err := ParseSelectList("a,"); !errors.Is(err, ErrSyntax) {
		t.Fatalf("trailing comma: %v", err)
	}
}
