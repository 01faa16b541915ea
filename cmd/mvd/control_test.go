package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/daemon/wire"
	"github.com/mvd-project/mvd/serveinfo"
)

// startDaemon runs mvd serve on dir in this process (as `mvd serve`
// wires it) until the test ends, with args added to its flags.
func startDaemon(t *testing.T, dir string, environ []string, args ...string) serveinfo.Info {
	t.Helper()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	daemon.BindCommandFlags(fs)
	if err := fs.Parse(append([]string{"--db", dir, "--admin-addr", "127.0.0.1:0"}, args...)); err != nil {
		t.Fatal(err)
	}
	cfg, err := daemon.LoadConfig(fs, environ)
	if err != nil {
		t.Fatal(err)
	}
	deps, err := wire.Deps(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv := daemon.NewServer(cfg, deps)
	drain, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(drain, context.Background()) }()
	select {
	case <-srv.Started():
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
		if err := deps.Close(); err != nil {
			t.Error(err)
		}
	})
	return srv.Info()
}

// cliRun is one command line's outcome.
type cliRun struct {
	code           int
	stdout, stderr string
}

// unstable are the parts of an output that differ from run to run: when
// a view was refreshed, how far behind it is in milliseconds, and its
// bytes on disk (the daemon keeps a provenance index beside a view).
// The daemon records its refreshes (view show prints them), a process
// working directly records none: the history (and SHOW's last refresh)
// is left out too.
var (
	unstable = regexp.MustCompile(`"refreshed_at_ms":\d+|at \d{4}-\d\d-\d\dT[0-9:.]+Z|"history":\[.*\]\}\n|"lag_ms":[0-9.]+|"bytes":\d+|\d+ bytes on disk|"last_refresh":(null|\{[^}]*\})`)
	history  = regexp.MustCompile(`recent refreshes:\n(  .*\n)*`)
)

func stable(s string) string {
	return history.ReplaceAllString(unstable.ReplaceAllString(s, "…"), "")
}

// TestCLIBothPaths: every view command and mvd sql give the same
// output and exit status whether they work on the database directly or
// through a running daemon's control API (create, alter, refresh, show,
// list, drop, SQL statements and the shell; failures with exit 1 and 2).
func TestCLIBothPaths(t *testing.T) {
	script := [][]string{
		{"view", "create", "v", "--source", "src", "--select", "id, upper(name) AS shout", "--where", "id > 100", "--limit", "5", "--auto-refresh", "manual", "--json"},
		{"view", "create", "w", "--source", "src", "--auto-refresh", "manual"},
		{"view", "create", "v", "--source", "src"},                          // exists: 1
		{"view", "create", "x"},                                             // no --source: 2
		{"view", "create", "x", "--source", "src", "--where", " "},          // empty filter: 1
		{"view", "create", "x", "--source", "src", "--interval", "5s"},      // usage: 2
		{"view", "create", "x", "--source", "src", "--select", "id,, name"}, // bad select: 1
		{"view", "refresh", "v", "--json"},                                  // rebuild
		{"view", "refresh", "v"},                                            // no_op
		{"view", "refresh", "v", "--full", "--source-version", "3"},         // rebuild to 3
		{"view", "refresh", "nope"},                                         // 1
		{"view", "show", "v", "--json"},
		{"view", "show", "v"},
		{"view", "show", "nope"},
		{"view", "alter", "v", "--auto-refresh", "interval", "--interval", "5s", "--debounce", "20ms", "--json"},
		{"view", "alter", "v", "--freshness-target", "1.5s"},
		{"view", "alter", "v", "--debounce", "-1s"}, // 2
		{"view", "alter", "w", "--interval", "5s"},  // 2: w is manual
		{"view", "alter", "v"},                                // 2: nothing to change
		{"view", "alter", "nope", "--auto-refresh", "manual"}, // 1
		{"view", "list", "--json"},
		{"view", "list"},
		{"sql", "CREATE MATERIALIZED VIEW s AS SELECT id FROM src WHERE id > 200"},
		{"sql", "--json", "REFRESH MATERIALIZED VIEW s"},
		{"sql", "REFRESH MATERIALIZED VIEW s"},
		{"sql", "--json", "SHOW MATERIALIZED VIEWS"},
		{"sql", "REFRESH MATERIALIZED VIEW nope"},     // 1
		{"sql", "CREATE MATERIALIZED VIEW AS SELECT"}, // 1: syntax, with its position
		{"sql", "--json", "DROP MATERIALIZED VIEW IF EXISTS nope"},
		{"view", "drop", "nope"}, // 1
		{"view", "drop", "nope", "--if-exists"},
		{"view", "drop", "w"},
		{"view", "list", "--json"},
	}
	shell := "REFRESH MATERIALIZED VIEW s; DROP MATERIALIZED VIEW nope; DROP MATERIALIZED VIEW IF EXISTS nope; DROP MATERIALIZED VIEW s; REFRESH MATERIALIZED VIEW s;"
	line := func(dir string, args []string) []string {
		if args[0] == "view" {
			return append([]string{"view", args[1], "--db", dir}, args[2:]...)
		}
		return append([]string{"sql", "--db", dir}, args[1:]...)
	}
	play := func(t *testing.T, dir string) []cliRun {
		var out []cliRun
		for _, args := range script {
			code, stdout, stderr := runCLI(line(dir, args)...)
			out = append(out, cliRun{code, stdout, stderr})
		}
		for _, json := range []string{"", "--json"} {
			args := []string{"sql", "--db", dir}
			if json != "" {
				args = append(args, json)
			}
			code, stdout, stderr := runCLIIn(shell, args...)
			out = append(out, cliRun{code, stdout, stderr})
		}
		return out
	}
	direct := play(t, viewDB(t))
	served := viewDB(t)
	const token = "both-paths-token"
	startDaemon(t, served, []string{"MVD_ADMIN_TOKEN=" + token}, "--create-grace", "1h")
	// Every command of the script asks the daemon: with a wrong token
	// each is refused (and changes nothing), before any is run with the
	// right one.
	t.Setenv("MVD_ADMIN_TOKEN", "wrong")
	for _, args := range script {
		if len(args) == 3 && args[0] == "view" && (args[1] == "create" || args[1] == "alter") {
			continue // a usage mistake found before the daemon is asked: no --source, nothing to alter
		}
		if code, _, stderr := runCLI(line(served, args)...); code != 1 || !strings.Contains(stderr, "bearer token") {
			t.Errorf("mvd %s with a wrong token: exit %d, %q; want the daemon's refusal", strings.Join(args, " "), code, stderr)
		}
	}
	t.Setenv("MVD_ADMIN_TOKEN", token)
	remote := play(t, served)
	for i := range direct {
		d, r := direct[i], remote[i]
		d.stdout, r.stdout = stable(d.stdout), stable(r.stdout)
		what := "the shell"
		if i < len(script) {
			what = strings.Join(script[i], " ")
		}
		if d != r {
			t.Errorf("mvd %s:\n  directly:      exit %d, stdout %q, stderr %q\n  through serve: exit %d, stdout %q, stderr %q",
				what, d.code, d.stdout, d.stderr, r.code, r.stdout, r.stderr)
		}
	}
	// The script covers each exit status it means to.
	seen := map[int]bool{}
	for _, r := range direct {
		seen[r.code] = true
	}
	if !seen[0] || !seen[1] || !seen[2] {
		t.Errorf("exit statuses seen: %v", seen)
	}
	if _, err := os.Stat(filepath.Join(served, ".mvd", serveinfo.File)); err != nil {
		t.Fatalf("the daemon was not running through the script: %v", err)
	}
}

// TestControlAPISecurity: a daemon given a token answers 401 to a
// request without it or with a wrong one, and changes nothing; the CLI
// sends the token of MVD_ADMIN_TOKEN or --admin-token-file; a body over
// 1 MiB is refused with 413, declared or not, and creates nothing.
func TestControlAPISecurity(t *testing.T) {
	dir := viewDB(t)
	if code, _, errOut := runCLI("view", "create", "--db", dir, "v", "--source", "src", "--auto-refresh", "manual"); code != 0 {
		t.Fatal(errOut)
	}
	const token = "a-long-random-admin-token"
	info := startDaemon(t, dir, []string{"MVD_ADMIN_TOKEN=" + token})
	base := "http://" + info.AdminAddr
	send := func(method, path, auth string, body io.Reader, length int64) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = length
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	views := func() string {
		t.Helper()
		status, body := send(http.MethodGet, "/v1/views", "Bearer "+token, nil, 0)
		if status != http.StatusOK {
			t.Fatalf("GET /v1/views with the token: %d %s", status, body)
		}
		return body
	}
	if got := views(); got != `["v"]`+"\n" {
		t.Fatalf("views: %s", got)
	}
	create := `{"name":"x","source":"src"}`
	for _, auth := range []string{"", "Bearer wrong", "Bearer " + token + "x", "Bearer " + token[:len(token)-1], token} {
		for _, r := range []struct{ method, path, body string }{
			{http.MethodDelete, "/v1/views/v", ""},
			{http.MethodPost, "/v1/views", create},
			{http.MethodPatch, "/v1/views/v", `{"auto_refresh":"on-commit"}`},
			{http.MethodPost, "/v1/sql", `{"sql":"DROP MATERIALIZED VIEW v"}`},
			{http.MethodPost, "/v1/views/v/refresh", ""},
			{http.MethodGet, "/v1/views", ""},
		} {
			status, body := send(r.method, r.path, auth, strings.NewReader(r.body), int64(len(r.body)))
			if status != http.StatusUnauthorized || !strings.Contains(body, `"code":1`) {
				t.Errorf("%s %s with %q: %d %s, want 401", r.method, r.path, auth, status, body)
			}
		}
	}
	if got := views(); got != `["v"]`+"\n" {
		t.Fatalf("views after refused requests: %s", got)
	}
	t.Setenv("MVD_ADMIN_TOKEN", token)
	if code, out, _ := runCLI("view", "show", "--db", dir, "v", "--json"); code != 0 || !strings.Contains(out, `"version":1,`) {
		t.Fatalf("refused requests changed view v: exit %d %s", code, out)
	}
	// The CLI without the token is refused and says how to give it.
	t.Setenv("MVD_ADMIN_TOKEN", "")
	if code, _, errOut := runCLI("view", "drop", "--db", dir, "v"); code != 1 || !strings.Contains(errOut, "--admin-token-file") {
		t.Fatalf("CLI without the token: exit %d %q", code, errOut)
	}
	tokFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI("view", "list", "--db", dir, "--admin-token-file", tokFile); code != 0 || out != "v\n" {
		t.Fatalf("CLI with --admin-token-file: exit %d %q %q", code, out, errOut)
	}
	t.Setenv("MVD_ADMIN_TOKEN", token)
	if code, out, errOut := runCLI("sql", "--db", dir, "--json", "DROP MATERIALIZED VIEW IF EXISTS nope"); code != 0 || out != `{"dropped":null,"existed":false}`+"\n" {
		t.Fatalf("CLI with MVD_ADMIN_TOKEN: exit %d %q %q", code, out, errOut)
	}
	// Over 1 MiB: declared (refused before it is read) or chunked
	// (refused once the limit is read).
	big := `{"name":"x","source":"src","select":"` + strings.Repeat("a", 2<<20) + `"}`
	for _, length := range []int64{int64(len(big)), -1} {
		status, body := send(http.MethodPost, "/v1/views", "Bearer "+token, strings.NewReader(big), length)
		if status != http.StatusRequestEntityTooLarge || !strings.Contains(body, `"code":2`) {
			t.Errorf("a 2 MiB body (length %d): %d %.200s, want 413", length, status, body)
		}
	}
	status, body := send(http.MethodPost, "/v1/sql", "Bearer "+token, strings.NewReader(`{"sql":"DROP MATERIALIZED VIEW v", "x":`+strings.Repeat(" ", 2<<20)+`1}`), -1)
	if status != http.StatusRequestEntityTooLarge {
		t.Errorf("a 2 MiB SQL body: %d %.200s", status, body)
	}
	if got := views(); got != `["v"]`+"\n" {
		t.Fatalf("views after oversized requests: %s", got)
	}
}
