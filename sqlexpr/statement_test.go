package sqlexpr

import (
	"errors"
	"reflect"
	"strings"
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

// TestParseStatementEmptyWhere: a WHERE with nothing in it is marked for
// the caller, which refuses it with LanceDB's error.
func TestParseStatementEmptyWhere(t *testing.T) {
	for _, src := range []string{"CREATE MATERIALIZED VIEW v AS SELECT a FROM s WHERE", "CREATE MATERIALIZED VIEW v AS SELECT a FROM s WHERE ;",
		"CREATE MATERIALIZED VIEW v AS SELECT a FROM s WHERE LIMIT 3"} {
		st, err := ParseStatement(src)
		if err != nil || !st.(*CreateView).FilterEmpty || st.(*CreateView).Filter != nil {
			t.Errorf("ParseStatement(%q): %+v, %v; want FilterEmpty", src, st, err)
		}
	}
	st, err := ParseStatement("CREATE MATERIALIZED VIEW v AS SELECT a FROM s WHERE a > 1")
	if err != nil || st.(*CreateView).FilterEmpty {
		t.Errorf("a filter: %+v, %v", st, err)
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

// TestUnsupportedClauses: the clauses of a full query are refused by
// name (ErrUnsupported at the clause), in a statement, a select list and
// a filter alike.
func TestUnsupportedClauses(t *testing.T) {
	const head = "CREATE MATERIALIZED VIEW v AS SELECT "
	cases := []struct {
		src, clause, at string
	}{
		{head + "id FROM src GROUP BY id", "GROUP BY", "GROUP"},
		{head + "id, count(*) AS n FROM src WHERE id > 1 GROUP BY id", "GROUP BY", "GROUP"},
		{head + "id FROM src ORDER BY id", "ORDER BY", "ORDER"},
		{head + "id FROM src WHERE id > 1 ORDER BY id LIMIT 3", "ORDER BY", "ORDER"},
		{head + "id FROM src WHERE id > 1 HAVING id > 2", "HAVING", "HAVING"},
		{head + "DISTINCT id FROM src", "DISTINCT", "DISTINCT"},
		{head + "id FROM src UNION SELECT id FROM other", "UNION", "UNION"},
		{head + "id FROM src LIMIT 3 UNION SELECT id FROM other", "UNION", "UNION"},
		{head + "id FROM src JOIN other ON src.id = other.id", "JOIN", "JOIN"},
		{head + "id FROM src a JOIN other b ON a.id = b.id", "JOIN", "JOIN"},
		{head + "id FROM src AS a LEFT JOIN other b ON a.id = b.id", "JOIN", "LEFT"},
		{head + "id FROM src, other", "JOIN", ","},
		{head + "id FROM src a, other b", "JOIN", ","},
		{head + "id ORDER BY id", "ORDER BY", "ORDER"},
	}
	for _, c := range cases {
		_, err := ParseStatement(c.src)
		var pe *PosError
		want := "not supported in a materialized view: " + c.clause + " (views are projections and filters of one table)"
		if !errors.As(err, &pe) || !errors.Is(err, ErrUnsupported) || pe.Msg != want {
			t.Errorf("ParseStatement(%q): %v, want %q", c.src, err, want)
			continue
		}
		if at := strings.LastIndex(c.src[:pe.Pos+len(c.at)], c.at); at != pe.Pos {
			t.Errorf("ParseStatement(%q) at %d, want the %q at %d", c.src, pe.Pos, c.at, at)
		}
	}
	for _, c := range []struct{ src, clause string }{
		{"id > 1 GROUP BY id", "GROUP BY"},
		{"id > 1 ORDER BY id", "ORDER BY"},
		{"id > 1 HAVING id > 2", "HAVING"},
		{"id > 1 UNION SELECT 1", "UNION"},
	} {
		if _, err := ParseFilter(c.src); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), ": "+c.clause+" (") {
			t.Errorf("ParseFilter(%q): %v, want %s refused", c.src, err, c.clause)
		}
	}
	for _, c := range []struct{ src, clause string }{
		{"DISTINCT id", "DISTINCT"},
		{"id, name ORDER BY id", "ORDER BY"},
		{"id GROUP BY id", "GROUP BY"},
	} {
		if _, err := ParseSelectList(c.src); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), ": "+c.clause+" (") {
			t.Errorf("ParseSelectList(%q): %v, want %s refused", c.src, err, c.clause)
		}
	}
	// Names that only look like clauses still work.
	for _, src := range []string{head + "`distinct`, left(name, 2) AS l, `order` FROM src WHERE `group` > 1", head + "distinct FROM src", head + "id FROM src"} {
		if _, err := ParseStatement(src); err != nil {
			t.Errorf("ParseStatement(%q): %v", src, err)
		}
	}
}
