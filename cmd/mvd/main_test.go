package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func fixture(t *testing.T, name string) (table string, ans *lancedbtest.Answers) {
	t.Helper()
	dir := lancedbtest.FixturesDir(t)
	ans, err := lancedbtest.LoadAnswers(filepath.Join(dir, name+".answers.json"))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name+".lance"), ans
}

func TestVersionsJSON(t *testing.T) {
	table, ans := fixture(t, "history_stable_v22")
	for _, args := range [][]string{
		{"table", "versions", table, "--json"},
		{"table", "versions", "--json", table},
	} {
		code, out, errOut := runCLI(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != len(ans.Versions) {
			t.Fatalf("%d lines, want %d", len(lines), len(ans.Versions))
		}
		for i, line := range lines {
			var v versionJSON
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			want := ans.Versions[i]
			if v.Version != want.Version || v.Rows != want.NumRows || v.Operation == "" || v.Timestamp == "" {
				t.Errorf("line %d = %+v; LanceDB: version %d with %d rows", i, v, want.Version, want.NumRows)
			}
		}
	}
	code, out, _ := runCLI("table", "versions", table)
	if code != 0 || !strings.HasPrefix(out, "VERSION") || !strings.Contains(out, "reserve_fragments") {
		t.Errorf("human output: exit %d:\n%s", code, out)
	}
}

func TestSchemaJSON(t *testing.T) {
	table, ans := fixture(t, "history_stable_v22")
	for _, va := range []lancedbtest.VersionAnswer{ans.Versions[0], ans.Versions[10]} {
		code, out, errOut := runCLI("table", "schema", table, "--version", itoa(va.Version), "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var got, want any
		json.Unmarshal([]byte(out), &got)
		json.Unmarshal(va.Schema, &want)
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if !bytes.Equal(gb, wb) {
			t.Errorf("version %d schema\n got %s\nwant %s", va.Version, gb, wb)
		}
	}
}

func TestChangesJSON(t *testing.T) {
	table, ans := fixture(t, "history_stable_v22")
	for _, ca := range ans.Changes {
		if ca.From%3 != 1 { // a spread of pairs keeps the test quick
			continue
		}
		code, out, errOut := runCLI("table", "changes", table, "--from", itoa(ca.From), "--to", itoa(ca.To), "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		// Decode into the exact shape the issue specifies.
		var got struct {
			From, To                   uint64
			Inserted, Updated, Deleted []uint64
		}
		dec := json.NewDecoder(strings.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&got); err != nil {
			t.Fatalf("output %q: %v", out, err)
		}
		if got.From != ca.From || got.To != ca.To ||
			!eq(got.Inserted, ca.Inserted) || !eq(got.Updated, ca.Updated) || !eq(got.Deleted, ca.Deleted) {
			t.Errorf("changes %d..%d differ from LanceDB", ca.From, ca.To)
		}
		if !strings.Contains(out, `"inserted":[`) {
			t.Errorf("empty sets must print as [] not null: %s", out)
		}
	}
}

func eq(a, b []uint64) bool { return len(a) == len(b) && (len(a) == 0 || slices.Equal(a, b)) }

func TestErrorsAreOneLine(t *testing.T) {
	table, _ := fixture(t, "history_stable_v21")
	plain, _ := fixture(t, "history_plain_v22")
	notTable := t.TempDir()
	corrupt := filepath.Join(t.TempDir(), "t.lance")
	os.MkdirAll(filepath.Join(corrupt, "_versions"), 0o755)
	os.WriteFile(filepath.Join(corrupt, "_versions", "1.manifest"), []byte("not a manifest at all"), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{}, 2, "missing command"},
		{[]string{"frobnicate"}, 2, "unknown command"},
		{[]string{"table", "versions"}, 2, "exactly one table path"},
		{[]string{"table", "versions", filepath.Join(notTable, "missing")}, 1, "does not exist"},
		{[]string{"table", "versions", notTable}, 1, "not a Lance table"},
		{[]string{"table", "schema", table, "--version", "99"}, 1, "version not found"},
		{[]string{"table", "schema", table, "--version", "x"}, 2, "invalid value"},
		{[]string{"table", "versions", corrupt}, 1, "corrupt"},
		{[]string{"table", "changes", table, "--from", "1"}, 2, "--from N and --to M"},
		{[]string{"table", "changes", table, "--from", "3", "--to", "1"}, 2, "after"},
		{[]string{"table", "changes", table, "--from", "1", "--to", "99"}, 1, "version not found"},
		{[]string{"table", "changes", plain, "--from", "1", "--to", "2"}, 1, "new_table_enable_stable_row_ids"},
	} {
		code, out, errOut := runCLI(tc.args...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tc.args, code, tc.code, errOut)
		}
		if out != "" {
			t.Errorf("%v: printed %q on stdout", tc.args, out)
		}
		if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "mvd: ") || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: stderr %q, want one line mentioning %q", tc.args, errOut, tc.want)
		}
	}
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }
