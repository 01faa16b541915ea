package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// TestCopyReadByLanceDB copies a fixture version into each file format and
// checks that LanceDB reads the copy with exactly the source's rows, and
// that the copy has the requested row-id mode.
func TestCopyReadByLanceDB(t *testing.T) {
	lancedbtest.Require(t)
	src, ans := fixture(t, "history_stable_v21")
	va := ans.Versions[len(ans.Versions)-2] // a version with deletions in place
	for _, tc := range []struct {
		format string
		stable bool
	}{{"2.2", true}, {"2.1", false}, {"2.0", true}} {
		dst := filepath.Join(t.TempDir(), "copy.lance")
		args := []string{"table", "copy", src, dst, "--version", itoa(va.Version), "--data-storage-version", tc.format}
		if !tc.stable {
			args = append(args, "--stable-row-ids=false")
		}
		code, out, errOut := runCLI(args...)
		if code != 0 || !strings.Contains(out, "copied "+itoa(va.NumRows)+" rows") {
			t.Fatalf("%v: exit %d: %s %s", args, code, out, errOut)
		}
		tbl, err := lance.Open(context.Background(), vfs.OS(), dst)
		if err != nil {
			t.Fatal(err)
		}
		m, err := tbl.Checkout(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if string(m.DataFileVersion) != tc.format || m.StableRowIDs() != tc.stable || m.Version != 1 {
			t.Fatalf("copy: format %s, stable %v, version %d", m.DataFileVersion, m.StableRowIDs(), m.Version)
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
			t.Fatalf("%s: LanceDB reads schema %s, source has %s", tc.format, got.Schema, va.Schema)
		}
		if len(got.Rows) != len(va.Data) {
			t.Fatalf("%s: LanceDB reads %d rows, source has %d", tc.format, len(got.Rows), len(va.Data))
		}
		for i := range va.Data {
			for k, v := range va.Data[i] {
				if !bytes.Equal(bytes.TrimSpace(got.Rows[i][k]), bytes.TrimSpace(v)) {
					t.Fatalf("%s: row %d %s = %s, source %s", tc.format, i, k, got.Rows[i][k], v)
				}
			}
		}
	}
	code, _, errOut := runCLI("table", "copy", src, src)
	if code == 0 || !strings.Contains(errOut, "already exists") {
		t.Fatalf("copy onto an existing path: exit %d, %s", code, errOut)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		t.Fatalf("bad JSON: %s / %s", a, b)
	}
	return reflect.DeepEqual(x, y)
}
