package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/control"
	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/daemon/wire"
	"github.com/mvd-project/mvd/matview"
)

// viewState is what a refused statement must leave as it was: each
// table's name and, for views, the latest version and metadata.
type viewState map[string]struct {
	Version  uint64
	Metadata map[string]string
}

func dbState(t *testing.T, dir string) viewState {
	t.Helper()
	db, err := matview.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	names, err := db.TableNames()
	if err != nil {
		t.Fatal(err)
	}
	st := viewState{}
	for _, n := range names {
		e := st[n]
		if v, err := db.OpenView(ctx, n); err == nil {
			info, err := v.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			e.Version, e.Metadata = info.Version, info.Metadata
		} else if e.Version, err = db.LatestVersion(ctx, n); err != nil {
			t.Fatal(err)
		}
		st[n] = e
	}
	return st
}

// policyKeys are the view metadata keys of the auto-refresh policy.
var policyKeys = []string{matview.KeyAutoRefresh, matview.KeyIntervalSeconds, matview.KeyDebounceMS, matview.KeyFreshnessTargetMS}

func policyOf(st viewState, view string) map[string]string {
	out := map[string]string{}
	for _, k := range policyKeys {
		out[k] = st[view].Metadata[k]
	}
	return out
}

// sqlOK runs one statement with --json and decodes its line into out.
func sqlOK(t *testing.T, dir, stmt string, out any) string {
	t.Helper()
	code, stdout, stderr := runCLI("sql", "--db", dir, "--json", stmt)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", stmt, code, stderr)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(stdout), out); err != nil {
			t.Fatalf("%s: %v: %s", stmt, err, stdout)
		}
	}
	return stdout
}

// TestSQLPolicyOptions: CREATE … WITH and ALTER … SET store the policy
// exactly as `mvd view create/alter` store the same settings, and ALTER
// answers as `view alter --json` does; options not given keep their value.
func TestSQLPolicyOptions(t *testing.T) {
	dir := viewDB(t)
	sqlOK(t, dir, "CREATE MATERIALIZED VIEW s WITH (auto_refresh_enabled = true, auto_refresh_interval_seconds = 30, freshness_target_ms = 500, debounce_ms = 20) AS SELECT id FROM src", nil)
	if code, _, errOut := runCLI("view", "create", "--db", dir, "f", "--source", "src", "--select", "id",
		"--auto-refresh", "interval", "--interval", "30s", "--freshness-target", "500ms", "--debounce", "20ms"); code != 0 {
		t.Fatal(errOut)
	}
	st := dbState(t, dir)
	if got, want := policyOf(st, "s"), policyOf(st, "f"); !reflect.DeepEqual(got, want) || want[matview.KeyAutoRefresh] != "interval" {
		t.Fatalf("CREATE … WITH stored %v; view create stored %v", got, want)
	}
	if st["s"].Version != 1 {
		t.Fatalf("CREATE … WITH took %d commits, want 1", st["s"].Version)
	}
	sqlOK(t, dir, "CREATE MATERIALIZED VIEW plain AS SELECT id FROM src", nil)
	if md := dbState(t, dir)["plain"].Metadata; md[matview.KeyAutoRefresh] != "" {
		t.Fatalf("CREATE without WITH stored a policy: %v", md)
	}

	// Each ALTER against the view alter of the same settings.
	for _, tc := range []struct {
		set   string
		flags []string
		want  string
	}{
		{"auto_refresh_enabled = false", []string{"--auto-refresh", "manual"}, "manual"},
		{"auto_refresh_enabled = true", []string{"--auto-refresh", "on-commit"}, "on-commit"},
		{"auto_refresh_interval_seconds = 7, debounce_ms = 0", []string{"--auto-refresh", "interval", "--interval", "7s", "--debounce", "0s"}, "interval"},
		{"freshness_target_ms = 250", []string{"--freshness-target", "250ms"}, "interval"},
		{"auto_refresh_interval_seconds = 0", []string{"--auto-refresh", "on-commit"}, "on-commit"},
		{"debounce_ms = 5, freshness_target_ms = 0", []string{"--debounce", "5ms", "--freshness-target", "0s"}, "on-commit"},
		{"auto_refresh_enabled = true, auto_refresh_interval_seconds = 2", []string{"--auto-refresh", "interval", "--interval", "2s"}, "interval"},
	} {
		var got, want map[string]any
		sqlOK(t, dir, "ALTER MATERIALIZED VIEW s SET ("+tc.set+")", &got)
		code, out, errOut := runCLI(append([]string{"view", "alter", "--db", dir, "f", "--json"}, tc.flags...)...)
		if code != 0 || json.Unmarshal([]byte(out), &want) != nil {
			t.Fatalf("view alter %v: exit %d: %s", tc.flags, code, errOut)
		}
		want["view"] = "s"
		if !reflect.DeepEqual(got, want) || got["auto_refresh"] != tc.want {
			t.Errorf("SET (%s): %v; view alter %v: %v", tc.set, got, tc.flags, want)
		}
		st := dbState(t, dir)
		if g, w := policyOf(st, "s"), policyOf(st, "f"); !reflect.DeepEqual(g, w) {
			t.Errorf("SET (%s) stored %v; view alter stored %v", tc.set, g, w)
		}
		if got["version"] != float64(st["s"].Version) {
			t.Errorf("SET (%s) answered version %v, the view is at %d", tc.set, got["version"], st["s"].Version)
		}
	}
	code, out, errOut := runCLI("sql", "--db", dir, "ALTER MATERIALIZED VIEW s SET (auto_refresh_enabled = false)")
	if code != 0 || !strings.HasPrefix(out, "altered view s: auto-refresh manual") {
		t.Fatalf("ALTER text: exit %d, %q %q", code, out, errOut)
	}
}

// TestSQLCreateIfNotExists: IF NOT EXISTS over an existing view changes
// nothing, options or not; without it the name is refused at its position.
func TestSQLCreateIfNotExists(t *testing.T) {
	dir := viewDB(t)
	var n map[string]any
	sqlOK(t, dir, "CREATE MATERIALIZED VIEW IF NOT EXISTS v AS SELECT id FROM src WHERE id > 3", &n)
	if n["sourceTable"] != "src" || n["existed"] != nil {
		t.Fatalf("first create: %v", n)
	}
	before := dbState(t, dir)
	sqlOK(t, dir, "CREATE MATERIALIZED VIEW IF NOT EXISTS v WITH (auto_refresh_enabled = false) AS SELECT name FROM src", &n)
	if n["existed"] != true || n["filter"] != "id > 3" {
		t.Fatalf("IF NOT EXISTS over v: %v", n)
	}
	if after := dbState(t, dir); !reflect.DeepEqual(before, after) {
		t.Fatalf("IF NOT EXISTS changed %v to %v", before, after)
	}
	code, out, _ := runCLI("sql", "--db", dir, "CREATE MATERIALIZED VIEW IF NOT EXISTS v AS SELECT id FROM src")
	if code != 0 || out != "view v exists; nothing changed\n" {
		t.Fatalf("text: %d %q", code, out)
	}
	code, _, errOut := runCLI("sql", "--db", dir, "CREATE MATERIALIZED VIEW IF NOT EXISTS src AS SELECT id FROM src")
	if code != 1 || errOut != "mvd: Table 'src' is not a materialized view (at position 39)\n" {
		t.Fatalf("IF NOT EXISTS over a table: %d %q", code, errOut)
	}
}

// TestSQLRefreshOptions: every REFRESH option through statement mode and
// the shell, a budget within LanceDB Enterprise's rules accepted.
func TestSQLRefreshOptions(t *testing.T) {
	dir := viewDB(t)
	sqlOK(t, dir, "CREATE MATERIALIZED VIEW v AS SELECT id, name FROM src WHERE id > 100", nil)
	var r matview.Result
	sqlOK(t, dir, "REFRESH MATERIALIZED VIEW v WITH (source_version = 3)", &r)
	if r.Mode != "rebuild" || r.SourceVersion != 3 {
		t.Fatalf("source_version = 3: %+v", r)
	}
	sqlOK(t, dir, "REFRESH MATERIALIZED VIEW v WITH (cpu_millis = 1500, memory_bytes = 268435456, gpu_count = 0, async = false)", &r)
	if r.Mode != "incremental" || r.SourceVersion != 9 {
		t.Fatalf("budgeted: %+v", r)
	}
	in := "REFRESH MATERIALIZED VIEW v WITH (full = true, gpu_count = 0);\n" +
		"REFRESH MATERIALIZED VIEW v WITH (FULL = TRUE, cpu_millis = 1, memory_bytes = 1073741824, gpu_count = 0);\n" +
		"REFRESH MATERIALIZED VIEW v WITH (full = false);"
	code, out, errOut := runCLIIn(in, "sql", "--db", dir, "--json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], `{"mode":"rebuild",`) || !strings.HasPrefix(lines[1], `{"mode":"rebuild",`) ||
		!strings.HasPrefix(lines[2], `{"mode":"no_op",`) {
		t.Fatalf("shell: exit %d, %q %q", code, out, errOut)
	}
	code, out, _ = runCLI("sql", "--db", dir, "REFRESH MATERIALIZED VIEW v")
	if code != 0 || !strings.HasPrefix(out, "no_op, 0 rows written, source version 9") {
		t.Fatalf("text: %d %q", code, out)
	}
}

// TestSQLRefusalsChangeNothing: every refusal exits 1 naming its position
// and why, in statement mode and in the shell (--json and not), and leaves
// every view's version and metadata as they were.
func TestSQLRefusalsChangeNothing(t *testing.T) {
	dir := viewDB(t)
	sqlOK(t, dir, "CREATE MATERIALIZED VIEW v WITH (debounce_ms = 10) AS SELECT id FROM src", nil)
	sqlOK(t, dir, "CREATE MATERIALIZED VIEW m WITH (auto_refresh_enabled = false) AS SELECT id FROM src", nil)
	sqlOK(t, dir, "REFRESH MATERIALIZED VIEW v", nil)
	before := dbState(t, dir)
	cases := []struct{ stmt, want string }{
		// Malformed SQL.
		{"CREATE MATERIALIZED VIEW AS SELECT id FROM src", "at position 28: expected AS, found \"SELECT\""},
		{"CREATE MATERIALIZED VIEW 1 AS SELECT id FROM src", "at position 25: expected a view name"},
		{"REFRESH MATERIALIZED VIEW v WITH (full = true", "at position 45"},
		{"ALTER MATERIALIZED VIEW v SET ()", "at position 31: expected an option name"},
		{"DESCRIBE TABLE v", "at position 9: expected MATERIALIZED VIEW or JOB"},
		// Unknown, mistyped, negative and duplicate options.
		{"CREATE MATERIALIZED VIEW w WITH (auto_refresh = true) AS SELECT id FROM src", "at position 33: unknown option auto_refresh"},
		{"CREATE MATERIALIZED VIEW w WITH (debounce_ms = 'fast') AS SELECT id FROM src", "at position 47: option debounce_ms expects a non-negative integer"},
		{"CREATE MATERIALIZED VIEW w WITH (freshness_target_ms = -1) AS SELECT id FROM src", "at position 55: option freshness_target_ms must not be negative"},
		{"CREATE MATERIALIZED VIEW w WITH (debounce_ms = 1, debounce_ms = 1) AS SELECT id FROM src", "at position 50: option debounce_ms given twice"},
		{"ALTER MATERIALIZED VIEW v SET (auto_refresh_enabled = 1)", "at position 54: option auto_refresh_enabled expects true or false"},
		{"ALTER MATERIALIZED VIEW v SET (full = true)", "at position 31: unknown option full"},
		{"ALTER MATERIALIZED VIEW v SET (auto_refresh_interval_seconds = 1.5)", "at position 63"},
		{"ALTER MATERIALIZED VIEW v SET (debounce_ms = -5)", "at position 45: option debounce_ms must not be negative"},
		{"REFRESH MATERIALIZED VIEW v WITH (full = 'yes')", "at position 41: option full expects true or false"},
		{"REFRESH MATERIALIZED VIEW v WITH (speed = 1)", "at position 34: unknown option speed"},
		{"REFRESH MATERIALIZED VIEW v WITH (source_version = -2)", "at position 51: option source_version must not be negative"},
		{"REFRESH MATERIALIZED VIEW v WITH (async = true, async = true)", "at position 48: option async given twice"},
		// Options that contradict each other or the view.
		{"CREATE MATERIALIZED VIEW w WITH (auto_refresh_enabled = false, auto_refresh_interval_seconds = 5) AS SELECT id FROM src", "auto_refresh_enabled is false (at position 63)"},
		{"ALTER MATERIALIZED VIEW m SET (auto_refresh_interval_seconds = 5)", "view m does not refresh automatically (manual); add auto_refresh_enabled = true to refresh it every 5s (at position 31)"},
		{"ALTER MATERIALIZED VIEW v SET (debounce_ms = 18446744073709551615)", "option debounce_ms = 18446744073709551615 is too large (at most 2305843009213) (at position 31)"},
		// Budgets against LanceDB Enterprise's rules.
		{"REFRESH MATERIALIZED VIEW v WITH (cpu_millis = 1000)", "requires all three of cpu_millis, memory_bytes and gpu_count (missing memory_bytes, gpu_count) (at position 34)"},
		{"REFRESH MATERIALIZED VIEW v WITH (full = true, memory_bytes = 1024, gpu_count = 0)", "(missing cpu_millis) (at position 47)"},
		{"REFRESH MATERIALIZED VIEW v WITH (cpu_millis = 0, memory_bytes = 1024, gpu_count = 0)", "cpu_millis = 0 allows no worker; give at least 1 (at position 34)"},
		{"REFRESH MATERIALIZED VIEW v WITH (gpu_count = 1)", "gpu_count = 1 asks for a GPU, and no refresh here runs on a GPU (use gpu_count = 0 for CPU only) (at position 34)"},
		{"REFRESH MATERIALIZED VIEW v WITH (cpu_millis = 1000, memory_bytes = 1024, gpu_count = 0, gpu_class = 'a100')", "gpu_class 'a100' asks for a GPU, and no refresh here runs on a GPU (at position 89)"},
		{"REFRESH MATERIALIZED VIEW v WITH (memory_bytes = 9223372036854775808, cpu_millis = 1, gpu_count = 0)", "option memory_bytes = 9223372036854775808 is too large (at most 9223372036854775807) (at position 34)"},
		// Statements that need a daemon, without one.
		{"REFRESH MATERIALIZED VIEW v WITH (async = true)", "no mvd serve is running for this database (start `mvd serve --db DIR`; jobs run in the daemon) (at position 34)"},
		{"REFRESH MATERIALIZED VIEW v WITH (full = true, async = true)", "start `mvd serve --db DIR`"},
		{"SHOW JOBS", "no mvd serve is running"},
		{"DESCRIBE JOB j_1", "no mvd serve is running"},
		{"CANCEL JOB j_1", "no mvd serve is running"},
		// Names that are not there, or not views.
		{"CREATE MATERIALIZED VIEW v WITH (auto_refresh_enabled = false) AS SELECT id FROM src", "Table 'v' already exists (at position 25)"},
		{"CREATE MATERIALIZED VIEW w AS SELECT id FROM nope", "Table 'nope' was not found (at position 45)"},
		{"ALTER MATERIALIZED VIEW nope SET (debounce_ms = 1)", "Table 'nope' was not found (at position 24)"},
		{"ALTER MATERIALIZED VIEW src SET (debounce_ms = 1)", "Table 'src' is not a materialized view (at position 24)"},
		{"REFRESH MATERIALIZED VIEW nope WITH (full = true)", "Table 'nope' was not found (at position 26)"},
		{"DROP MATERIALIZED VIEW nope", "Table 'nope' was not found (at position 23)"},
		{"DROP MATERIALIZED VIEW src", "is not a materialized view (at position 23)"},
		{"DESCRIBE MATERIALIZED VIEW nope", "Table 'nope' was not found (at position 27)"},
	}
	var shell strings.Builder
	for _, c := range cases {
		code, out, errOut := runCLI("sql", "--db", dir, c.stmt)
		if code != 1 || out != "" || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "position") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 1 and %q", c.stmt, code, out, errOut, c.want)
		}
		if after := dbState(t, dir); !reflect.DeepEqual(before, after) {
			t.Fatalf("%s changed %v to %v", c.stmt, before, after)
		}
		shell.WriteString(c.stmt + "; -- a comment; no end\n")
	}
	// The shell: one {"error","code"} line each with --json, one stderr
	// line each without; nothing changed either way.
	code, out, errOut := runCLIIn(shell.String(), "sql", "--db", dir, "--json")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || errOut != "" || len(lines) != len(cases) {
		t.Fatalf("shell --json: exit %d, %d lines for %d statements, stderr %q", code, len(lines), len(cases), errOut)
	}
	for i, l := range lines {
		var f shellFailure
		if err := json.Unmarshal([]byte(l), &f); err != nil || f.Code != 1 || !strings.Contains(f.Error, cases[i].want) {
			t.Errorf("shell line %d for %s: %s", i, cases[i].stmt, l)
		}
	}
	code, out, errOut = runCLIIn(shell.String(), "sql", "--db", dir)
	if code != 1 || out != "" || strings.Count(errOut, "\n") != len(cases) {
		t.Fatalf("shell: exit %d, stdout %q, %d stderr lines for %d statements", code, out, strings.Count(errOut, "\n"), len(cases))
	}
	if after := dbState(t, dir); !reflect.DeepEqual(before, after) {
		t.Fatalf("the shell changed %v to %v", before, after)
	}
	if _, err := os.Stat(dir + "/w.lance"); !os.IsNotExist(err) {
		t.Fatalf("a refused CREATE left w.lance: %v", err)
	}
}

// serveInProcess runs mvd serve on dir in process until the returned stop.
func serveInProcess(t *testing.T, dir string) (stop func()) {
	t.Helper()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	daemon.BindCommandFlags(fs)
	if err := fs.Parse([]string{"--db", dir, "--admin-addr", "127.0.0.1:0", "--create-grace", "0"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := daemon.LoadConfig(fs, nil)
	if err != nil {
		t.Fatal(err)
	}
	deps, err := wire.Deps(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv := daemon.NewServer(cfg, deps)
	drain, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(drain, context.Background()) }()
	<-srv.Started()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		if err := deps.Close(); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// TestSQLShowAndDescribe: SHOW MATERIALIZED VIEWS and DESCRIBE
// MATERIALIZED VIEW report the definition, schema, policy, watermark, the
// source's latest version, the lag and the refreshes mvd serve recorded
// (asked of the running daemon, then read from its store once it stopped).
func TestSQLShowAndDescribe(t *testing.T) {
	dir := viewDB(t)
	sqlOK(t, dir, "CREATE MATERIALIZED VIEW v WITH (debounce_ms = 5) AS SELECT id, upper(name) AS shout FROM src WHERE id > 100", nil)
	sqlOK(t, dir, "CREATE MATERIALIZED VIEW m WITH (auto_refresh_enabled = false) AS SELECT id FROM src", nil)
	show := func() map[string]map[string]any {
		t.Helper()
		var list []map[string]any
		sqlOK(t, dir, "SHOW MATERIALIZED VIEWS", &list)
		out := map[string]map[string]any{}
		for _, v := range list {
			for _, k := range []string{"name", "source", "watermark", "source_version", "lag_versions", "lag_ms", "policy", "last_refresh"} {
				if _, ok := v[k]; !ok {
					t.Fatalf("SHOW --json item without %q: %v", k, v)
				}
			}
			out[v["name"].(string)] = v
		}
		return out
	}
	db, err := matview.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	first, err := db.CommitTime(context.Background(), "src", 1)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	low := time.Since(first)
	got := show()
	high := time.Since(first)
	m := got["m"]
	if m["source"] != "src" || m["watermark"] != nil || m["source_version"] != 9.0 || m["lag_versions"] != 9.0 || m["last_refresh"] != nil ||
		m["policy"].(map[string]any)["auto_refresh"] != "manual" {
		t.Fatalf("SHOW m before any refresh: %v", m)
	}
	// Never refreshed: behind since the source's first commit.
	if lag := time.Duration(m["lag_ms"].(float64) * float64(time.Millisecond)); lag < low-time.Millisecond || lag > high+time.Millisecond {
		t.Fatalf("lag_ms %v, want between %v and %v", lag, low, high)
	}
	if p := got["v"]["policy"].(map[string]any); p["auto_refresh"] != "on-commit" || p["debounce_ms"] != 5.0 {
		t.Fatalf("SHOW v policy: %v", p)
	}

	stop := serveInProcess(t, dir)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if v := show()["v"]; v["last_refresh"] != nil {
			if lr := v["last_refresh"].(map[string]any); lr["mode"] != "rebuild" || lr["error"] != nil {
				t.Fatalf("last refresh from the daemon: %v", lr)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the daemon's refresh never showed")
		}
	}
	var live map[string]any
	sqlOK(t, dir, "DESCRIBE MATERIALIZED VIEW v", &live)
	stop()

	var d struct {
		Name        string                     `json:"name"`
		SourceTable string                     `json:"sourceTable"`
		Projections [][2]string                `json:"projections"`
		Filter      string                     `json:"filter"`
		Watermark   *matview.NodeWatermark     `json:"watermark"`
		Schema      []map[string]any           `json:"schema"`
		Policy      map[string]any             `json:"policy"`
		SourceVer   uint64                     `json:"source_version"`
		LagVersions uint64                     `json:"lag_versions"`
		LagMS       float64                    `json:"lag_ms"`
		History     []checkpoint.RefreshRecord `json:"history"`
	}
	sqlOK(t, dir, "DESCRIBE MATERIALIZED VIEW v", &d)
	if d.Name != "v" || d.SourceTable != "src" || d.Filter != "id > 100" || len(d.Projections) != 2 || d.Projections[1] != [2]string{"shout", "upper(name)"} {
		t.Fatalf("DESCRIBE definition: %+v", d)
	}
	if d.Watermark == nil || d.Watermark.SourceVersion != 9 || d.SourceVer != 9 || d.LagVersions != 0 || d.LagMS != 0 {
		t.Fatalf("DESCRIBE watermark and lag: %+v", d)
	}
	var cols []string
	for _, f := range d.Schema {
		cols = append(cols, f["name"].(string))
	}
	if len(cols) < 2 || cols[0] != "id" || cols[1] != "shout" {
		t.Fatalf("DESCRIBE schema: %v", d.Schema)
	}
	if d.Policy["auto_refresh"] != "on-commit" || d.Policy["debounce_ms"] != 5.0 {
		t.Fatalf("DESCRIBE policy: %v", d.Policy)
	}
	if len(d.History) == 0 || d.History[0].Mode != "rebuild" || d.History[0].SourceVersion != 9 || d.History[0].ViewVersion != d.Watermark.ViewVersion {
		t.Fatalf("DESCRIBE history from the store: %+v", d.History)
	}
	if h := live["history"].([]any); len(h) != len(d.History) {
		t.Fatalf("history from the daemon %v, from the store %+v", h, d.History)
	}
	code, out, errOut := runCLI("sql", "--db", dir, "DESCRIBE MATERIALIZED VIEW v")
	for _, want := range []string{"view:     v\n", "column:   shout = upper(name)\n", "where:    id > 100\n", "schema:   id: ", "policy:   on-commit, debounce 5ms\n",
		"refreshed: source version 9", "latest:   source version 9, 0 versions behind\n", "recent refreshes:\n", "rebuild, source version 0 -> 9"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("DESCRIBE text: exit %d, %q missing:\n%s%s", code, want, out, errOut)
		}
	}
	code, out, _ = runCLI("sql", "--db", dir, "SHOW MATERIALIZED VIEWS")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") || !strings.HasPrefix(lines[1], "m ") || !strings.Contains(lines[1], "manual") ||
		!strings.Contains(lines[2], "rebuild at ") {
		t.Fatalf("SHOW text: exit %d:\n%s", code, out)
	}
}

// TestSQLJobs: REFRESH … WITH (async = true) submits to the running
// daemon and answers {"job_id"} at once; SHOW JOBS, DESCRIBE JOB and
// CANCEL JOB answer from the daemon's jobs; refused budgets and unknown
// jobs fail at their position and record or change nothing.
func TestSQLJobs(t *testing.T) {
	dir := viewDB(t)
	sqlOK(t, dir, "CREATE MATERIALIZED VIEW v WITH (auto_refresh_enabled = false) AS SELECT id FROM src WHERE id > 100", nil)
	serveInProcess(t, dir)
	var sub map[string]string
	const submit = "REFRESH MATERIALIZED VIEW v WITH (async = true, full = true, cpu_millis = 1000, memory_bytes = 268435456, gpu_count = 0)"
	// Submitted as soon as the daemon runs: it waits for the daemon to
	// take the view up rather than being refused.
	code, out, errOut := runCLI("sql", "--db", dir, "--json", submit)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", submit, code, errOut)
	}
	if err := json.Unmarshal([]byte(out), &sub); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	id := sub["job_id"]
	if !strings.HasPrefix(id, "j") || len(sub) != 1 {
		t.Fatalf("async refresh answered %v", sub)
	}
	var job control.Job
	for deadline := time.Now().Add(30 * time.Second); !job.State.Final(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("job %s never ended: %+v", id, job)
		}
		sqlOK(t, dir, "DESCRIBE JOB "+id, &job)
	}
	if job.ID != id || job.View != "v" || job.State != control.JobSucceeded || job.Result == nil || job.Result.Mode != "rebuild" ||
		!job.Request.Full || job.Request.Budget.CPUMillis == nil || *job.Request.Budget.CPUMillis != 1000 {
		t.Fatalf("DESCRIBE JOB: %+v", job)
	}
	if st := dbState(t, dir); st["v"].Version != job.Result.Version {
		t.Fatalf("the view is at version %d, the job committed %d", st["v"].Version, job.Result.Version)
	}
	var jobs []control.Job
	sqlOK(t, dir, "SHOW JOBS", &jobs)
	if len(jobs) != 1 || jobs[0].ID != id || jobs[0].State != control.JobSucceeded {
		t.Fatalf("SHOW JOBS: %+v", jobs)
	}
	sqlOK(t, dir, "CANCEL JOB '"+id+"'", &job)
	if job.State != control.JobSucceeded {
		t.Fatalf("CANCEL JOB of a finished job: %+v", job)
	}
	before := dbState(t, dir)
	for _, c := range []struct{ stmt, want string }{
		{"REFRESH MATERIALIZED VIEW v WITH (async = true, gpu_count = 2)", "gpu_count = 2 asks for a GPU, and no refresh here runs on a GPU (use gpu_count = 0 for CPU only) (at position 48)"},
		{"REFRESH MATERIALIZED VIEW v WITH (async = true, memory_bytes = 1)", "(missing cpu_millis, gpu_count) (at position 48)"},
		{"DESCRIBE JOB j_nope", "(at position 13)"},
		{"CANCEL JOB j_nope", "(at position 11)"},
	} {
		code, out, errOut := runCLI("sql", "--db", dir, c.stmt)
		if code != 1 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, %q %q; want 1 and %q", c.stmt, code, out, errOut, c.want)
		}
	}
	sqlOK(t, dir, "SHOW JOBS", &jobs)
	if after := dbState(t, dir); len(jobs) != 1 || !reflect.DeepEqual(before, after) {
		t.Fatalf("refusals recorded jobs %+v or changed %v to %v", jobs, before, after)
	}
	// The shell, text: the submission line at once, then the jobs.
	code, out, errOut = runCLIIn("REFRESH MATERIALIZED VIEW v WITH (async = true); SHOW JOBS;", "sql", "--db", dir)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 4 || !strings.HasPrefix(lines[0], "submitted job j") || !strings.HasSuffix(lines[0], ": refresh of view v") ||
		!strings.HasPrefix(lines[1], "ID") || !strings.Contains(out, id) {
		t.Fatalf("shell: exit %d, %q %q", code, out, errOut)
	}
	code, out, _ = runCLI("sql", "--db", dir, "DESCRIBE JOB "+id)
	if code != 0 || !strings.Contains(out, "job:       "+id+"\n") || !strings.Contains(out, "state:     succeeded\n") ||
		!strings.Contains(out, "options:   full = true, cpu_millis = 1000, memory_bytes = 268435456, gpu_count = 0\n") || !strings.Contains(out, "result:    rebuild, ") {
		t.Fatalf("DESCRIBE JOB text: exit %d:\n%s", code, out)
	}
}

// TestSQLShellEveryStatement: each view statement through one shell,
// one JSON line each, the view's state after each as the statement says.
func TestSQLShellEveryStatement(t *testing.T) {
	dir := viewDB(t)
	in := "CREATE MATERIALIZED VIEW IF NOT EXISTS v WITH (auto_refresh_interval_seconds = 60, debounce_ms = 3) AS SELECT id FROM src WHERE id > 100;\n" +
		"CREATE MATERIALIZED VIEW IF NOT EXISTS v AS SELECT id FROM src;\n" +
		"ALTER MATERIALIZED VIEW v SET (auto_refresh_enabled = false);\n" +
		"REFRESH MATERIALIZED VIEW v WITH (full = true, cpu_millis = 2000, memory_bytes = 1073741824, gpu_count = 0);\n" +
		"SHOW MATERIALIZED VIEWS;\n" +
		"DESCRIBE MATERIALIZED VIEW v;\n" +
		"DROP MATERIALIZED VIEW IF EXISTS v;\n" +
		"DROP MATERIALIZED VIEW IF EXISTS v;\n"
	code, out, errOut := runCLIIn(in, "sql", "--db", dir, "--json")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || errOut != "" || len(lines) != 8 {
		t.Fatalf("exit %d, stderr %q:\n%s", code, errOut, out)
	}
	var items []map[string]any
	for i, l := range lines {
		var v any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, l)
		}
		if m, ok := v.(map[string]any); ok {
			items = append(items, m)
		} else {
			items = append(items, map[string]any{"array": v})
		}
	}
	if items[0]["sourceTable"] != "src" || items[0]["existed"] != nil || items[1]["existed"] != true || items[1]["filter"] != "id > 100" {
		t.Fatalf("creates: %s / %s", lines[0], lines[1])
	}
	if items[2]["auto_refresh"] != "manual" || items[2]["debounce_ms"] != 3.0 || items[2]["interval_seconds"] != nil || items[2]["version"] != 2.0 {
		t.Fatalf("alter: %s", lines[2])
	}
	if items[3]["mode"] != "rebuild" || items[3]["source_version"] != 9.0 || items[3]["version"] != 3.0 {
		t.Fatalf("refresh: %s", lines[3])
	}
	show := items[4]["array"].([]any)
	if len(show) != 1 || show[0].(map[string]any)["lag_versions"] != 0.0 || show[0].(map[string]any)["policy"].(map[string]any)["auto_refresh"] != "manual" {
		t.Fatalf("show: %s", lines[4])
	}
	if items[5]["name"] != "v" || items[5]["version"] != 3.0 || items[5]["watermark"].(map[string]any)["source_version"] != 9.0 {
		t.Fatalf("describe: %s", lines[5])
	}
	if lines[6] != `{"dropped":"v","existed":true}` || lines[7] != `{"dropped":null,"existed":false}` {
		t.Fatalf("drops: %s / %s", lines[6], lines[7])
	}
	if st := dbState(t, dir); len(st) != 1 {
		t.Fatalf("after the drop: %v", st)
	}
}
