package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// TestVersionZero checks that version 0 is refused everywhere a version is
// given: versions start at 1, and 0 used to mean "latest" silently.
func TestVersionZero(t *testing.T) {
	table, _ := fixture(t, "history_stable_v21")
	dst := filepath.Join(t.TempDir(), "copy.lance")
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"table", "schema", table, "--version", "0"}, "--version"},
		{[]string{"table", "scan", table, "--version=0"}, "--version"},
		{[]string{"table", "copy", table, dst, "--version", "0"}, "--version"},
		{[]string{"table", "changes", table, "--from", "0", "--to", "4"}, "--from"},
		{[]string{"table", "changes", table, "--from", "1", "--to", "0"}, "--to"},
		{[]string{"table", "scan", table, "--version", "-1"}, "--version"},
	} {
		code, out, errOut := runCLI(tc.args...)
		want := `invalid value "0" for ` + tc.flag + `: versions start at 1`
		if strings.Contains(strings.Join(tc.args, " "), "-1") {
			want = `invalid value "-1" for --version`
		}
		if code != 2 || out != "" || !strings.Contains(errOut, want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 with %q", tc.args, code, out, errOut, want)
		}
	}
	if _, err := os.Stat(dst); err == nil {
		t.Errorf("a refused copy created %s", dst)
	}
}

// TestVersionGap removes a manifest from the middle of a history and checks
// that asking for it names the gap.
func TestVersionGap(t *testing.T) {
	src, ans := fixture(t, "history_stable_v22")
	table := filepath.Join(t.TempDir(), "t.lance")
	if err := os.CopyFS(table, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	tbl, err := lance.Open(context.Background(), vfs.OS(), table)
	if err != nil {
		t.Fatal(err)
	}
	refs, err := tbl.Versions(context.Background())
	if err != nil || len(refs) < 5 || refs[2].Version != 3 {
		t.Fatalf("fixture versions %v (%v)", refs, err)
	}
	if err := os.Remove(filepath.Join(table, "_versions", refs[2].File)); err != nil {
		t.Fatal(err)
	}
	last := itoa(ans.Versions[len(ans.Versions)-1].Version)
	gap := "version 3 is missing (the table has versions 1-2, 4-" + last + ")"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"table", "schema", table, "--version", "3"}, gap},
		{[]string{"table", "scan", table, "--version", "3"}, gap},
		{[]string{"table", "changes", table, "--from", "3", "--to", "4"}, gap},
		{[]string{"table", "schema", table, "--version", "99"}, "the table has versions 1-2, 4-" + last},
	} {
		code, out, errOut := runCLI(tc.args...)
		if code != 1 || out != "" || !strings.Contains(errOut, "version not found: "+tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 with %q", tc.args, code, out, errOut, tc.want)
		}
	}
	// The versions around the gap still work.
	if code, _, errOut := runCLI("table", "changes", table, "--from", "2", "--to", "4"); code != 0 {
		t.Errorf("changes across the gap: exit %d: %s", code, errOut)
	}
}
