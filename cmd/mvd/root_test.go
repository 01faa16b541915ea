package main

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHelp checks that every way of asking for help shows the commands and
// every flag with its sentence, on stdout, with exit status 0.
func TestHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"help"}, []string{"table", "version", "sqlexpr/extensions.go", "README.md", "Exit status", "2  usage", "3  conflict"}},
		{[]string{"--help"}, []string{"table", "Exit status"}},
		{[]string{"table", "--help"}, []string{"versions", "schema", "changes", "scan", "copy", "list a table's versions"}},
		{[]string{"help", "table"}, []string{"versions", "schema", "changes", "scan", "copy"}},
		{[]string{"table", "scan", "--help"}, []string{"--version N", "--columns", "--select SQL", "--where SQL", "--with-row-ids", "--limit N", "--format FORMAT", "sqlexpr/extensions.go", "∅"}},
		{[]string{"help", "table", "scan"}, []string{"--version N", "--with-row-ids", "-h, --help"}},
		{[]string{"table", "copy", "-h"}, []string{"--data-storage-version", "--stable-row-ids", "--version N"}},
		{[]string{"table", "changes", "--help"}, []string{"--from N", "--to N", "--json"}},
		{[]string{"table", "versions", "--help"}, []string{"--json"}},
		{[]string{"table", "schema", "--help"}, []string{"--version N", "--json"}},
		{[]string{"help", "version"}, []string{"--json"}},
		{[]string{"view", "--help"}, []string{"create", "refresh", "show", "list", "drop", "Exit status 3"}},
		{[]string{"view", "create", "--help"}, []string{"--db DIR", "--source SRC", "--select list", "--where", "--limit N", "--json"}},
		{[]string{"view", "refresh", "--help"}, []string{"--db DIR", "--full", "--source-version N", "--cascade", "--json"}},
		{[]string{"view", "show", "--help"}, []string{"--db DIR", "--json"}},
		{[]string{"view", "list", "--help"}, []string{"--db DIR", "--json"}},
		{[]string{"view", "drop", "--help"}, []string{"--db DIR", "--if-exists"}},
		{[]string{"sql", "--help"}, []string{"--db DIR", "--json", "CREATE MATERIALIZED VIEW [IF NOT EXISTS] v", "auto_refresh_enabled = true|false",
			"auto_refresh_interval_seconds = N", "freshness_target_ms = N", "debounce_ms = N", "ALTER MATERIALIZED VIEW v SET (",
			"REFRESH MATERIALIZED VIEW v [WITH (full = true, source_version = N, async = true,", "cpu_millis = N, memory_bytes = N, gpu_count = N, gpu_class = 'name')]",
			"DROP MATERIALIZED VIEW [IF EXISTS] v", "SHOW MATERIALIZED VIEWS", "DESCRIBE MATERIALIZED VIEW v", "SHOW JOBS", "DESCRIBE JOB id", "CANCEL JOB id"}},
	} {
		code, out, errOut := runCLI(tc.args...)
		if code != 0 || errOut != "" {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: help lacks %q:\n%s", tc.args, w, out)
			}
		}
		// Every flag line carries a sentence after its name.
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], "-") && len(f) < 3 {
				t.Errorf("%v: flag without a description: %q", tc.args, line)
			}
		}
	}
}

// TestUsageErrors checks that command-line mistakes exit 2 with one line
// that spells flags as the user typed them.
func TestUsageErrors(t *testing.T) {
	table, _ := fixture(t, "history_stable_v21")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tabel"}, `unknown command "tabel" (did you mean "table"?)`},
		{[]string{"table"}, "missing table command (versions, schema, changes, scan, copy)"},
		{[]string{"table", "scna"}, `unknown table command "scna" (did you mean "scan"?)`},
		{[]string{"help", "frob"}, `unknown command "frob"`},
		{[]string{"help", "table", "frob"}, `unknown command "frob"`},
		{[]string{"table", "scan", table, "--frob"}, "unknown flag: --frob"},
		{[]string{"table", "scan", table, "--version", "x"}, `invalid value "x" for --version`},
		{[]string{"table", "scan", table, "--version"}, "flag needs an argument: --version"},
		{[]string{"table", "scan", table, "--limit", "-5"}, `invalid value "-5" for --limit`},
		{[]string{"table", "changes", table, "--from", "two", "--to", "3"}, `invalid value "two" for --from`},
		{[]string{"table", "copy", table}, "table copy takes SRC and DST, got 1 argument"},
		{[]string{"version", "extra"}, "version takes no arguments"},
		{[]string{"table", "schema", table, "-version", "2"}, "unknown flag -version; flags take two dashes: --version"},
		{[]string{"table", "versions", table, "-json"}, "flags take two dashes: --json"},
	} {
		code, out, errOut := runCLI(tc.args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "mvd: ") || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.args, code, out, errOut, tc.want)
		}
		if strings.Contains(errOut, "for -version") || strings.Contains(errOut, " -limit") {
			t.Errorf("%v: flag spelled with one dash: %q", tc.args, errOut)
		}
	}
}

type codedError struct{ code int }

func (e codedError) Error() string { return fmt.Sprintf("coded %d", e.code) }
func (e codedError) ExitCode() int { return e.code }

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("boom"), 1},
		{usagef("bad"), 2},
		{fmt.Errorf("refresh view v: %w", codedError{3}), 3},
		{fmt.Errorf("wrapped: %w", usagef("bad")), 2},
		{codedError{0}, 1},   // a code that would mean success is a failure
		{codedError{300}, 1}, // out of range for an exit status
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"parse: bad\n  | f0(k0, k1)\n", "parse: bad; | f0(k0, k1)"},
		{"a\r\nb", "a; b"},
		// A heading line ending in a colon continues with a space, not "; ".
		{"invalid configuration:\nlog-format \"xml\"\nwatch: bad", "invalid configuration: log-format \"xml\"; watch: bad"},
	} {
		if got := oneLine(tc.in); got != tc.want {
			t.Errorf("oneLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	long := oneLine(strings.Repeat("é", maxErrorLine))
	if len(long) > maxErrorLine+40 || !strings.HasSuffix(long, "more bytes)") || !strings.Contains(long, "é…") {
		t.Errorf("long message cut badly: %d bytes, ends %q", len(long), long[len(long)-30:])
	}
}

// TestVersion builds mvd as make does (a test binary has no VCS stamp) and checks
// that --version and the version command name the commit of the checkout.
func TestVersion(t *testing.T) {
	code, out, _ := runCLI("--version")
	code2, out2, _ := runCLI("version")
	if code != 0 || code2 != 0 || out != out2 || !strings.HasPrefix(out, "mvd ") || !strings.Contains(out, "commit ") {
		t.Fatalf("--version: %d %q; version: %d %q", code, out, code2, out2)
	}
	if testing.Short() {
		t.Skip("builds mvd")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "mvd")
	build := exec.Command("make", "-s", "-C", "../..", "build", "BIN="+bin)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		got, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(got), "commit "+strings.TrimSpace(string(head))) {
			t.Errorf("mvd %v = %q, want commit %s", args, got, head)
		}
	}
	got, err := exec.Command(bin, "version", "--json").Output()
	if err != nil || !strings.Contains(string(got), `"commit":"`+strings.TrimSpace(string(head))+`"`) {
		t.Errorf("mvd version --json = %q (%v)", got, err)
	}
}
