package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIndexNotSavedWarns: a refresh whose commit landed but whose
// provenance index cannot be saved (a file stands where its directory
// goes, as a full disk refuses it) is reported as committed, exit 0, with
// the warning in --json's "warnings" and one "mvd: warning:" line on
// stderr: by view refresh, sql and the sql shell.
func TestIndexNotSavedWarns(t *testing.T) {
	dir := viewDB(t)
	if code, _, errOut := runCLI("view", "create", "--db", dir, "v", "--source", "src"); code != 0 {
		t.Fatalf("create: exit %d: %s", code, errOut)
	}
	idx := filepath.Join(dir, "v.lance", "_mvd")
	if err := os.RemoveAll(idx); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(idx, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		stdin string
		args  []string
	}{
		{"", []string{"view", "refresh", "--db", dir, "v", "--json"}},
		{"", []string{"sql", "--db", dir, "--json", "REFRESH MATERIALIZED VIEW v WITH (full = true)"}},
		{"REFRESH MATERIALIZED VIEW v WITH (full = true);", []string{"sql", "--db", dir, "--json"}},
	} {
		code, out, errOut := runCLIIn(c.stdin, c.args...)
		if code != 0 || !strings.HasPrefix(out, `{"mode":"rebuild",`) || !strings.Contains(out, `"warnings":["the provenance index of view 'v' was not saved`) {
			t.Errorf("%v: exit %d, stdout %q; want exit 0 and the rebuild with its warning", c.args, code, out)
		}
		if !strings.HasPrefix(errOut, "mvd: warning: the provenance index of view 'v' was not saved") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: stderr %q; want one warning line", c.args, errOut)
		}
	}
}
