package sqlexpr

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func u64(v uint64) *uint64 { return &v }
func str(v string) *string { return &v }

func bl(v bool) *bool { return &v }

func TestParseStatement(t *testing.T) {
	cases := []struct {
		src  string
		want Statement
	}{
		{"SHOW MATERIALIZED VIEWS", &ShowViews{}},
		{"show materialized views;", &ShowViews{}},
		{"DROP MATERIALIZED VIEW v", &DropView{Name: "v", NamePos: 23}},
		{"DROP MATERIALIZED VIEW IF EXISTS `my view`", &DropView{Name: "my view", NamePos: 33, IfExists: true}},
		{"REFRESH MATERIALIZED VIEW v", &RefreshView{Name: "v", NamePos: 26}},
		{"REFRESH MATERIALIZED VIEW v WITH (full = true)", &RefreshView{Name: "v", NamePos: 26, Full: true, At: map[string]int{"full": 34}}},
		{"REFRESH MATERIALIZED VIEW v WITH (ASYNC = TRUE, full = false)", &RefreshView{Name: "v", NamePos: 26, Async: true, At: map[string]int{"async": 34, "full": 48}}},
		{
			"REFRESH MATERIALIZED VIEW v WITH (full = false, source_version = 7, cpu_millis = 1500, memory_bytes = 1073741824, gpu_count = 2, gpu_class = 'a100')",
			&RefreshView{Name: "v", NamePos: 26, SourceVersion: u64(7), CPUMillis: u64(1500), MemoryBytes: u64(1073741824), GPUCount: u64(2), GPUClass: str("a100"),
				At: map[string]int{"full": 34, "source_version": 48, "cpu_millis": 68, "memory_bytes": 87, "gpu_count": 114, "gpu_class": 129}},
		},
		{"ALTER MATERIALIZED VIEW v SET (auto_refresh_enabled = false)", &AlterView{Name: "v", NamePos: 24,
			Policy: PolicyOptions{AutoRefreshEnabled: bl(false), At: map[string]int{"auto_refresh_enabled": 31}}}},
		{"alter materialized view `a b` set (debounce_ms = 20, freshness_target_ms = 0, auto_refresh_interval_seconds = 5, auto_refresh_enabled = true);",
			&AlterView{Name: "a b", NamePos: 24, Policy: PolicyOptions{AutoRefreshEnabled: bl(true), IntervalSeconds: u64(5), FreshnessTargetMS: u64(0), DebounceMS: u64(20),
				At: map[string]int{"debounce_ms": 35, "freshness_target_ms": 53, "auto_refresh_interval_seconds": 78, "auto_refresh_enabled": 113}}}},
		{"DESCRIBE MATERIALIZED VIEW v", &DescribeView{Name: "v", NamePos: 27}},
		{"SHOW JOBS", &ShowJobs{}},
		{"show jobs;", &ShowJobs{}},
		{"DESCRIBE JOB j_01abc", &DescribeJob{ID: "j_01abc", IDPos: 13}},
		{"DESCRIBE JOB '01-x'", &DescribeJob{ID: "01-x", IDPos: 13}},
		{"CANCEL JOB `j 1`;", &CancelJob{ID: "j 1", IDPos: 11}},
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

// TestParseCreateViewOptions: CREATE's IF NOT EXISTS and WITH options,
// and the positions a caller's errors point at.
func TestParseCreateViewOptions(t *testing.T) {
	const src = "CREATE MATERIALIZED VIEW IF NOT EXISTS v WITH (auto_refresh_enabled = true, auto_refresh_interval_seconds = 30, freshness_target_ms = 500, debounce_ms = 20) AS SELECT id FROM src WHERE id > 1"
	st, err := ParseStatement(src)
	if err != nil {
		t.Fatal(err)
	}
	cv := st.(*CreateView)
	want := PolicyOptions{AutoRefreshEnabled: bl(true), IntervalSeconds: u64(30), FreshnessTargetMS: u64(500), DebounceMS: u64(20),
		At: map[string]int{"auto_refresh_enabled": 47, "auto_refresh_interval_seconds": 76, "freshness_target_ms": 112, "debounce_ms": 139}}
	if !cv.IfNotExists || cv.Name != "v" || cv.NamePos != 39 || !reflect.DeepEqual(cv.Policy, want) {
		t.Fatalf("got %+v", cv)
	}
	for what, pos := range map[string]int{"SELECT": cv.SelectPos, "src": cv.SourcePos, "WHERE": cv.WherePos} {
		if !strings.HasPrefix(src[pos:], what) {
			t.Errorf("%s at %d: %q", what, pos, src[pos:])
		}
	}
	st, err = ParseStatement("CREATE MATERIALIZED VIEW v AS SELECT id FROM src")
	if cv := st.(*CreateView); err != nil || cv.IfNotExists || cv.Policy.At != nil || cv.WherePos != 0 {
		t.Fatalf("no options: %+v, %v", st, err)
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
		{"REFRESH MATERIALIZED VIEW v WITH (cpu_millis = -5)", 47},
		{"REFRESH MATERIALIZED VIEW v WITH (memory_bytes = 1.5)", 49},
		{"REFRESH MATERIALIZED VIEW v WITH (async = 'yes')", 42},
		{"REFRESH MATERIALIZED VIEW v WITH (async = true, ASYNC = false)", 48},
		{"REFRESH MATERIALIZED VIEW v WITH ()", 34},
		{"REFRESH MATERIALIZED VIEW v WITH (gpu_count = 18446744073709551616)", 46},
		{"CREATE MATERIALIZED VIEW v WITH (auto_refresh = true) AS SELECT a FROM s", 33},
		{"CREATE MATERIALIZED VIEW v WITH (full = true) AS SELECT a FROM s", 33},
		{"CREATE MATERIALIZED VIEW v WITH (auto_refresh_enabled = 1) AS SELECT a FROM s", 56},
		{"CREATE MATERIALIZED VIEW v WITH (debounce_ms = -1) AS SELECT a FROM s", 47},
		{"CREATE MATERIALIZED VIEW v WITH (debounce_ms = 'x') AS SELECT a FROM s", 47},
		{"CREATE MATERIALIZED VIEW v WITH (debounce_ms = 1, debounce_ms = 2) AS SELECT a FROM s", 50},
		{"CREATE MATERIALIZED VIEW v WITH (debounce_ms = 1 AS SELECT a FROM s", 49},
		{"CREATE MATERIALIZED VIEW IF EXISTS v AS SELECT a FROM s", 28},
		{"CREATE MATERIALIZED VIEW v WITH debounce_ms = 1 AS SELECT a FROM s", 32},
		{"ALTER MATERIALIZED VIEW v", 25},
		{"ALTER MATERIALIZED VIEW v SET ()", 31},
		{"ALTER MATERIALIZED VIEW v SET (freshness_target_ms = 1.5)", 53},
		{"ALTER MATERIALIZED VIEW v SET (async = true)", 31},
		{"ALTER VIEW v SET (debounce_ms = 1)", 6},
		{"DESCRIBE v", 9},
		{"DESCRIBE MATERIALIZED VIEWS", 22},
		{"DESCRIBE JOB", 12},
		{"DESCRIBE JOB 12", 13},
		{"DESCRIBE JOB ''", 13},
		{"CANCEL j", 7},
		{"CANCEL JOB a b", 13},
		{"SHOW JOBS x", 10},
		{"SHOW VIEWS", 5},
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

// TestParseOptionErrorsSayWhy: each refused option says why, not only
// where.
func TestParseOptionErrorsSayWhy(t *testing.T) {
	for src, want := range map[string]string{
		"REFRESH MATERIALIZED VIEW v WITH (fast = true)":                       "unknown option fast; expected full, source_version, async, cpu_millis",
		"CREATE MATERIALIZED VIEW v WITH (full = true) AS SELECT a FROM s":     "unknown option full; expected auto_refresh_enabled",
		"REFRESH MATERIALIZED VIEW v WITH (cpu_millis = -5)":                   "option cpu_millis must not be negative",
		"ALTER MATERIALIZED VIEW v SET (debounce_ms = 1, DEBOUNCE_MS = 2)":     "option debounce_ms given twice",
		"ALTER MATERIALIZED VIEW v SET (auto_refresh_enabled = 'no')":          "option auto_refresh_enabled expects true or false",
		"ALTER MATERIALIZED VIEW v SET (auto_refresh_interval_seconds = true)": "option auto_refresh_interval_seconds expects a non-negative integer",
		"REFRESH MATERIALIZED VIEW v WITH (gpu_class = a100)":                  "option gpu_class expects a string",
		"DESCRIBE JOB 7": "expected a job ID",
		"SHOW TABLES":    "expected MATERIALIZED VIEWS or JOBS",
	} {
		_, err := ParseStatement(src)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseStatement(%q): %v, want %q", src, err, want)
		}
	}
}
