package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// TestLegacyScanAndCopy scans a table LanceDB writes in Lance file format
// 0.1 ("legacy") and copies it: the scan prints LanceDB's rows, and the
// copy, in 2.2 (mvd does not write legacy files), is read by LanceDB with
// the same rows and schema.
func TestLegacyScanAndCopy(t *testing.T) {
	dir := lancedbtest.Generate(t, []string{"history_stable_legacy"})
	src := filepath.Join(dir, "history_stable_legacy.lance")
	ans, err := lancedbtest.LoadAnswers(filepath.Join(dir, "history_stable_legacy.answers.json"))
	if err != nil {
		t.Fatal(err)
	}
	va := ans.Versions[len(ans.Versions)-1]
	code, out, errOut := runCLI("table", "scan", src)
	if code != 0 {
		t.Fatalf("scan: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(va.Data) {
		t.Fatalf("scan printed %d rows, LanceDB has %d", len(lines), len(va.Data))
	}
	for i, line := range lines {
		var row map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("scan line %q: %v", line, err)
		}
		for k, v := range va.Data[i] {
			if !jsonEqual(t, row[k], v) {
				t.Fatalf("scan row %d %s = %s, LanceDB %s", i, k, row[k], v)
			}
		}
	}

	dst := filepath.Join(t.TempDir(), "copy.lance")
	code, out, errOut = runCLI("table", "copy", src, dst)
	if code != 0 || !strings.Contains(out, "copied "+itoa(va.NumRows)+" rows") {
		t.Fatalf("copy: exit %d: %s %s", code, out, errOut)
	}
	tbl, err := lance.Open(context.Background(), vfs.OS(), dst)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tbl.Checkout(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if m.DataFileVersion != lance.DefaultFileVersion {
		t.Fatalf("the copy of a legacy table is in %q, want %q", m.DataFileVersion, lance.DefaultFileVersion)
	}
	raw := lancedbtest.RunNode(t, "query.mjs", dst, `{"select":null,"where":null}`)
	var got struct {
		Schema json.RawMessage
		Rows   []map[string]json.RawMessage
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(t, got.Schema, va.Schema) {
		t.Fatalf("LanceDB reads schema %s, source has %s", got.Schema, va.Schema)
	}
	if len(got.Rows) != len(va.Data) {
		t.Fatalf("LanceDB reads %d rows, source has %d", len(got.Rows), len(va.Data))
	}
	for i := range va.Data {
		for k, v := range va.Data[i] {
			if !bytes.Equal(bytes.TrimSpace(got.Rows[i][k]), bytes.TrimSpace(v)) {
				t.Fatalf("row %d %s = %s, source %s", i, k, got.Rows[i][k], v)
			}
		}
	}
}
