package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mvd-project/mvd/matview"
)

// viewDB copies a stable-row-id fixture into a fresh database as "src".
func viewDB(t *testing.T) string {
	t.Helper()
	table, _ := fixture(t, "history_stable_v21")
	dir := t.TempDir()
	err := filepath.Walk(table, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(table, p)
		dst := filepath.Join(dir, "src.lance", rel)
		if info.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// runCLIIn is runCLI with standard input.
func runCLIIn(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	root := newRootCmd(&out, &errb)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	code = report(root.Execute(), &errb)
	return code, out.String(), errb.String()
}

func TestViewCommands(t *testing.T) {
	dir := viewDB(t)
	ok := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	ok("view", "create", "--db", dir, "v", "--source", "src", "--select", "id, upper(name) AS shout", "--where", "id > 100", "--limit", "5")
	if got := ok("view", "refresh", "--db", dir, "v", "--json"); got != `{"mode":"rebuild","rows_written":5,"source_version":9,"version":2}`+"\n" {
		t.Fatalf("refresh --json: %q", got)
	}
	if got := ok("view", "refresh", "--db", dir, "v", "--json"); got != `{"mode":"no_op","rows_written":0,"source_version":9,"version":2}`+"\n" {
		t.Fatalf("second refresh: %q", got)
	}
	var show map[string]any
	if err := json.Unmarshal([]byte(ok("view", "show", "--db", dir, "v", "--json")), &show); err != nil {
		t.Fatal(err)
	}
	if show["sourceTable"] != "src" || show["filter"] != "id > 100" || show["limit"] != 5.0 || show["watermark"] == nil {
		t.Fatalf("show: %v", show)
	}
	if got := ok("view", "list", "--db", dir, "--json"); got != `["v"]`+"\n" {
		t.Fatalf("list: %q", got)
	}
	ok("view", "refresh", "--db", dir, "v", "--full", "--source-version", "3")
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"view", "refresh", "--db", "db://host/x", "v"}, 1, "mvd: database db://host/x: materialized views are supported on local databases and s3:// only\n"},
		{[]string{"view", "refresh", "v"}, 2, "--db"},
		{[]string{"view", "refresh", "--db", dir, "nope"}, 1, "mvd: Table 'nope' was not found\n"},
		{[]string{"view", "refresh", "--db", dir, "v", "--source-version", "99"}, 1, "no version 99"},
		{[]string{"view", "refresh", "--db", dir, "v", "--source-version", "0"}, 2, "versions start at 1"},
		{[]string{"view", "create", "--db", dir, "v", "--source", "src"}, 1, "mvd: Table 'v' already exists\n"},
		{[]string{"view", "create", "--db", dir, "w", "--source", "src", "--select", "upper(name)"}, 1, "AS name"},
		// A bad --select is a bad definition, as a bad --where: exit 1, "position".
		{[]string{"view", "create", "--db", dir, "w", "--source", "src", "--select", "id, name +"}, 1, "mvd: --select: syntax error at position 10: expected an expression, found end of input\n"},
		{[]string{"view", "create", "--db", dir, "w", "--source", "src", "--where", "id >"}, 1, "mvd: Invalid input, invalid view filter: syntax error at position 4: expected an expression, found end of input\n"},
		{[]string{"view", "create", "--db", dir, "w", "--source", "src", "--select", "DISTINCT id"}, 1, "mvd: --select: not supported in a materialized view: DISTINCT (views are projections and filters of one table)\n"},
		{[]string{"view", "create", "--db", dir, "w", "--source", "src", "--where", "id > 1 GROUP BY id"}, 1, "mvd: Invalid input, invalid view filter: not supported in a materialized view: GROUP BY (views are projections and filters of one table)\n"},
		{[]string{"sql", "--db", dir, "CREATE MATERIALIZED VIEW w AS SELECT id FROM src s JOIN other o ON s.id = o.id"}, 1, "mvd: SQL at position 51: not supported in a materialized view: JOIN (views are projections and filters of one table)\n"},
		{[]string{"sql", "--db", dir, "CREATE MATERIALIZED VIEW w AS SELECT id FROM src ORDER BY id"}, 1, "not supported in a materialized view: ORDER BY ("},
		{[]string{"sql", "--db", dir, "CREATE MATERIALIZED VIEW w AS SELECT id FROM src UNION SELECT id FROM src"}, 1, "not supported in a materialized view: UNION ("},
		{[]string{"sql", "--db", dir, "CREATE MATERIALIZED VIEW w AS SELECT id FROM src WHERE id > 1 HAVING id > 2"}, 1, "not supported in a materialized view: HAVING ("},
		{[]string{"sql", "--db", dir, "CREATE MATERIALIZED VIEW w AS SELECT DISTINCT id FROM src"}, 1, "not supported in a materialized view: DISTINCT ("},
		{[]string{"sql", "--db", dir, "CREATE MATERIALIZED VIEW w AS SELECT id, count(*) AS n FROM src GROUP BY id"}, 1, "not supported in a materialized view: GROUP BY ("},
		{[]string{"view", "create", "--db", dir, "w", "--source", "src", "--where", "nope > 1"}, 1, "Invalid input, invalid view filter"},
		{[]string{"view", "show", "--db", dir, "src"}, 1, "mvd: Table 'src' is not a materialized view\n"},
		{[]string{"view", "drop", "--db", dir, "src"}, 1, "is not a materialized view"},
		{[]string{"view", "drop", "--db", dir, "nope"}, 1, "was not found"},
		{[]string{"view", "drop", "--db", dir, "nope", "--if-exists"}, 0, ""},
		{[]string{"sql", "--db", dir, "REFRESH MATERIALIZED"}, 1, "syntax error"},
	} {
		code, _, errOut := runCLI(tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.msg) || strings.Count(errOut, "\n") > 1 {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.msg)
		}
	}
	ok("view", "drop", "--db", dir, "v")
	if got := ok("view", "list", "--db", dir, "--json"); got != "[]\n" {
		t.Fatalf("list after drop: %q", got)
	}
}

// TestSQLShell drives many statements through one warm process, reading
// each as its ';' arrives; failures are reported in-band and the shell goes on.
func TestSQLShell(t *testing.T) {
	dir := viewDB(t)
	in := "CREATE MATERIALIZED VIEW a AS SELECT id, name FROM src WHERE name LIKE 'n-1%' -- a comment; not the end\n;" +
		"REFRESH MATERIALIZED VIEW a;\nREFRESH MATERIALIZED VIEW a ;REFRESH MATERIALIZED VIEW missing;\n" +
		"REFRESH MATERIALIZED VIEW a WITH (full = true, source_version = 2);SHOW MATERIALIZED VIEWS;DROP MATERIALIZED VIEW IF EXISTS zz;" +
		"REFRESH MATERIALIZED VIEW a"
	code, out, errOut := runCLIIn(in, "sql", "--db", dir, "--json")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 8 {
		t.Fatalf("%d lines:\n%s", len(lines), out)
	}
	want := []string{"", `{"mode":"rebuild",`, `{"mode":"no_op",`, `{"error":"Table 'missing' was not found (at position 26)","code":1}`,
		`{"mode":"rebuild","rows_written":`, `[{"name":"a","source":"src","watermark":{"source_version":2,`, `{"dropped":null,"existed":false}`, `{"mode":"incremental",`}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %s, want %s…", i, lines[i], w)
		}
	}
	// Without --json a failure is one stderr line (and no summary line)
	// and sets the exit status.
	code, _, errOut = runCLIIn("REFRESH MATERIALIZED VIEW a; REFRESH MATERIALIZED VIEW nope;", "sql", "--db", dir)
	if code != 1 || errOut != "mvd: Table 'nope' was not found (at position 26)\n" {
		t.Fatalf("exit %d: %q", code, errOut)
	}
	code, _, errOut = runCLIIn("REFRESH MATERIALIZED VIEW x; SHOW MATERIALIZED VIEWS; REFRESH MATERIALIZED VIEW y;", "sql", "--db", dir)
	if code != 1 || errOut != "mvd: Table 'x' was not found (at position 26)\nmvd: Table 'y' was not found (at position 26)\n" {
		t.Fatalf("two failures: exit %d: %q", code, errOut)
	}
	code, out, errOut = runCLI("sql", "--db", dir, "--json", "DROP MATERIALIZED VIEW a")
	if code != 0 || out != `{"dropped":"a","existed":true}`+"\n" {
		t.Fatalf("drop --json: exit %d, %q %q", code, out, errOut)
	}
}

// TestRefreshConflictExit3: in-process refreshers race one view; exactly
// one commits, the losers exit 3 naming the winning version.
func TestRefreshConflictExit3(t *testing.T) {
	if code := exitCode(&matview.ConflictError{View: "v", Version: 4}); code != 3 {
		t.Fatalf("conflict exits %d", code)
	}
	dir := viewDB(t)
	if code, _, e := runCLI("view", "create", "--db", dir, "v", "--source", "src"); code != 0 {
		t.Fatal(e)
	}
	const n = 6
	codes := make([]int, n)
	outs := make([]string, n)
	errs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], outs[i], errs[i] = runCLI("view", "refresh", "--db", dir, "v", "--json")
		}()
	}
	wg.Wait()
	won := 0
	for i := range n {
		switch {
		case codes[i] == 0 && strings.Contains(outs[i], `"mode":"rebuild"`):
			won++
		case codes[i] == 0 && strings.Contains(outs[i], `"mode":"no_op"`):
		case codes[i] == 3 && strings.Contains(errs[i], "view version 2 was committed first"):
		default:
			t.Fatalf("refresher %d: exit %d, %s %s", i, codes[i], outs[i], errs[i])
		}
	}
	if won != 1 {
		t.Fatalf("%d refreshers committed", won)
	}
}
