package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestViewCreateEmptyWhere: an empty or blank --where (or WHERE with
// nothing after it) is refused with LanceDB's error, and nothing is left
// behind; it does not mean "no filter".
func TestViewCreateEmptyWhere(t *testing.T) {
	dir := viewDB(t)
	const lancedb = "mvd: Invalid input, invalid view filter: Invalid user input: Error parsing statement: SELECT 1 FROM t WHERE "
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"view", "create", "--db", dir, "w", "--source", "src", "--where", ""}, lancedb + " (sql parser error: Expected: an expression, found: EOF)\n"},
		{[]string{"view", "create", "--db", dir, "w", "--source", "src", "--where", "   "}, lancedb + "    (sql parser error: Expected: an expression, found: EOF)\n"},
		{[]string{"sql", "--db", dir, "CREATE MATERIALIZED VIEW w AS SELECT id FROM src WHERE"}, lancedb + " (sql parser error: Expected: an expression, found: EOF) (at position 49)\n"},
		{[]string{"sql", "--db", dir, "CREATE MATERIALIZED VIEW w AS SELECT id FROM src WHERE LIMIT 3;"}, lancedb + " (sql parser error: Expected: an expression, found: EOF) (at position 49)\n"},
	} {
		code, out, errOut := runCLI(tc.args...)
		if code != 1 || out != "" || errOut != tc.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 1 and %q", tc.args, code, out, errOut, tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "w.lance")); !os.IsNotExist(err) {
			t.Fatalf("%q left w.lance behind (%v)", tc.args, err)
		}
	}
}

// TestViewCreateLanceDBWarnings: SQL LanceDB 0.39 cannot plan gives one
// warning line and a "warnings" array; --lancedb-compatible refuses it
// (exit 1, nothing left behind); SQL LanceDB plans gives no warning.
func TestViewCreateLanceDBWarnings(t *testing.T) {
	dir := viewDB(t)
	code, out, errOut := runCLI("view", "create", "--db", dir, "band", "--source", "src", "--json",
		"--select", "id, CASE WHEN id > 5 THEN 'hi' ELSE 'lo' END AS band", "--where", "ceil(id) > 1")
	const line = "mvd: warning: LanceDB 0.39 cannot refresh view band: CASE (column 'band'), CEIL (filter) not supported SQL in lance (mvd refreshes it; --lancedb-compatible refuses such definitions)\n"
	if code != 0 || errOut != line {
		t.Fatalf("create: exit %d, stderr %q; want the warning %q", code, errOut, line)
	}
	var n struct {
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &n); err != nil || len(n.Warnings) != 2 || !strings.Contains(n.Warnings[0], "CASE (column 'band')") || !strings.Contains(n.Warnings[1], "CEIL (filter)") {
		t.Fatalf("--json warnings: %v %s", err, out)
	}
	// Through SQL, in the shell and the one-shot form alike.
	code, out, errOut = runCLIIn("CREATE MATERIALIZED VIEW t2 AS SELECT id, TRIM(name) AS n FROM src;", "sql", "--db", dir, "--json")
	if code != 0 || !strings.Contains(out, `"warnings":["LanceDB 0.39 cannot plan TRIM (column 'n'): not supported SQL in lance"]`) || strings.Count(errOut, "mvd: warning: ") != 1 {
		t.Fatalf("sql create: exit %d, %s %q", code, out, errOut)
	}
	// No warning (and no "warnings" key) for what LanceDB plans.
	code, out, errOut = runCLI("view", "create", "--db", dir, "plain", "--source", "src", "--json", "--select", "id, btrim(name) AS n, CAST(id AS STRING) AS s")
	if code != 0 || errOut != "" || strings.Contains(out, "warnings") {
		t.Fatalf("plain: exit %d, %s %q", code, out, errOut)
	}
	// --lancedb-compatible refuses, leaving nothing.
	for _, args := range [][]string{
		{"view", "create", "--db", dir, "strict", "--source", "src", "--lancedb-compatible", "--select", "id, CASE WHEN id > 5 THEN 1 END AS big"},
		{"sql", "--db", dir, "--lancedb-compatible", "CREATE MATERIALIZED VIEW strict AS SELECT id FROM src WHERE id IS DISTINCT FROM 3"},
	} {
		code, _, errOut = runCLI(args...)
		if code != 1 || !strings.HasPrefix(errOut, "mvd: LanceDB 0.39 cannot plan ") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, %q", args, code, errOut)
		}
		if _, err := os.Stat(filepath.Join(dir, "strict.lance")); !os.IsNotExist(err) {
			t.Fatalf("%q left strict.lance behind", args)
		}
	}
	if code, _, errOut = runCLI("sql", "--db", dir, "--lancedb-compatible", "CREATE MATERIALIZED VIEW ok AS SELECT id FROM src WHERE id > 3"); code != 0 || errOut != "" {
		t.Fatalf("compatible create: exit %d, %q", code, errOut)
	}
}

// TestViewListsUnreadableView: a view whose newest manifest is damaged is
// listed (stderr names the problem; --json gives {"name","error"}) and
// dropped; view show prints its refresh time as RFC 3339; --cascade
// prints no "mvd:" line on success.
func TestViewListsUnreadableView(t *testing.T) {
	dir := viewDB(t)
	for _, args := range [][]string{
		{"view", "create", "--db", dir, "up", "--source", "src"},
		{"view", "create", "--db", dir, "down", "--source", "up"},
		{"view", "create", "--db", dir, "bad", "--source", "src"},
		{"view", "refresh", "--db", dir, "bad"},
	} {
		if code, _, errOut := runCLI(args...); code != 0 {
			t.Fatalf("%q: %s", args, errOut)
		}
	}
	code, out, errOut := runCLI("view", "refresh", "--db", dir, "down", "--cascade")
	if code != 0 || errOut != "" || !strings.HasPrefix(out, "refreshed upstream view up: rebuild") || !strings.Contains(out, "\nrefreshed down: rebuild") {
		t.Fatalf("--cascade: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = runCLI("view", "show", "--db", dir, "bad")
	if code != 0 || !regexp.MustCompile(`refreshed: source version \d+, view version 2, at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z\n`).MatchString(out) {
		t.Fatalf("show: %q", out)
	}
	versions := filepath.Join(dir, "bad.lance", "_versions")
	ents, err := os.ReadDir(versions)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".manifest") {
			names = append(names, e.Name())
		}
	}
	// V2 names sort newest first; the refresh wrote version 2.
	sort.Strings(names)
	b, err := os.ReadFile(filepath.Join(versions, names[0]))
	if err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] ^= 0x5a
	}
	if err := os.WriteFile(filepath.Join(versions, names[0]), b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI("view", "list", "--db", dir)
	if code != 0 || out != "bad\ndown\nup\n" || !strings.HasPrefix(errOut, "mvd: view 'bad' cannot be read: ") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("list: exit %d, %q %q", code, out, errOut)
	}
	code, out, _ = runCLI("sql", "--db", dir, "--json", "SHOW MATERIALIZED VIEWS")
	var items []any
	if err := json.Unmarshal([]byte(out), &items); code != 0 || err != nil || len(items) != 3 || items[1].(map[string]any)["name"] != "down" {
		t.Fatalf("SHOW --json: exit %d, %v, %s", code, err, out)
	}
	if m, ok := items[0].(map[string]any); !ok || m["name"] != "bad" || !strings.HasPrefix(m["error"].(string), "view 'bad' cannot be read: ") {
		t.Fatalf("SHOW --json: %s", out)
	}
	if code, _, errOut = runCLI("view", "drop", "--db", dir, "bad"); code != 0 {
		t.Fatalf("drop: %s", errOut)
	}
	if code, out, errOut = runCLI("view", "list", "--db", dir, "--json"); code != 0 || out != `["down","up"]`+"\n" || errOut != "" {
		t.Fatalf("list after drop: %q %q", out, errOut)
	}
}
