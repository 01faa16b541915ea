package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestScanWhereRowID checks that --where can read _rowid (LanceDB's row
// id, which --with-row-ids prints) and keeps exactly the rows whose
// printed _rowid matches, and that without --with-row-ids the error says
// how to get row ids.
func TestScanWhereRowID(t *testing.T) {
	table, _ := fixture(t, "history_stable_v21")
	code, all, errOut := runCLI("table", "scan", table, "--with-row-ids")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var want []string
	for _, line := range bytes.Split(bytes.TrimSpace([]byte(all)), []byte("\n")) {
		row, _ := decodeLine(t, line)
		id := row["_rowid"].(json.Number)
		if n, err := id.Int64(); err == nil && n >= 2 && n < 5 {
			want = append(want, string(line))
		}
	}
	if len(want) == 0 {
		t.Fatal("fixture has no row ids 2 to 4")
	}
	code, out, errOut := runCLI("table", "scan", table, "--with-row-ids", "--where", "_rowid >= 2 AND _rowid < 5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := strings.Split(strings.TrimSpace(out), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("--where _rowid in [2, 5) kept %d rows, want %d:\n%s", len(got), len(want), out)
	}
	// _rowaddr: the rows past the first fragment.
	var wantAddr []string
	for _, line := range bytes.Split(bytes.TrimSpace([]byte(all)), []byte("\n")) {
		row, _ := decodeLine(t, line)
		if addr, err := strconv.ParseUint(string(row["_rowaddr"].(json.Number)), 10, 64); err == nil && addr>>32 > 0 {
			wantAddr = append(wantAddr, string(line))
		}
	}
	if len(wantAddr) == 0 {
		t.Fatal("fixture has no rows past its first fragment")
	}
	code, out, errOut = runCLI("table", "scan", table, "--with-row-ids", "--where", "_rowaddr > 4294967295")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := strings.TrimSpace(out); got != strings.Join(wantAddr, "\n") {
		t.Fatalf("--where _rowaddr > 2^32-1 kept\n%s\nwant %d rows", got, len(wantAddr))
	}
	code, _, errOut = runCLI("table", "scan", table, "--where", "_rowid < 3")
	if code == 0 || !strings.Contains(errOut, "--with-row-ids") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Fatalf("exit %d, stderr %q: want a one-line usage error naming --with-row-ids", code, errOut)
	}
}

// TestSelectErrorIsOneShortLine checks that a failing --select prints one
// line that does not echo a huge expression back.
func TestSelectErrorIsOneShortLine(t *testing.T) {
	table, _ := fixture(t, "history_stable_v21")
	huge := "CASE " + strings.Repeat("WHEN id = 1 THEN 'x' ", 4000) + "END + 1"
	for _, sel := range []string{"1/0", huge} {
		code, _, errOut := runCLI("table", "scan", table, "--select", sel)
		msg := strings.TrimSpace(errOut)
		if code == 0 || strings.Contains(msg, "\n") || len(msg) > 600 || strings.Contains(msg, "f0(") {
			t.Errorf("--select %.30q: exit %d, %d bytes of stderr: %.300q", sel, code, len(msg), msg)
		}
	}
}
