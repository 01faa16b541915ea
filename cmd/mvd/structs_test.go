package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
)

// structsAnswer is what testdata/lancedb/structs.mjs writes next to a table.
type structsAnswer struct {
	Versions []struct {
		Version uint64
		Schema  json.RawMessage
		Rows    []map[string]json.RawMessage
	}
}

// TestConstantStructPages reads tables whose struct columns hold the same
// value in every row of a page (LanceDB 0.39 writes constant pages for
// them in format 2.2), in every struct shape and at every version of a
// history of one-row updates, an append and a delete, and compares each
// row with LanceDB's. It then copies the latest version into the other
// format and checks that LanceDB reads the copy with the same rows.
func TestConstantStructPages(t *testing.T) {
	lancedbtest.Require(t)
	out := t.TempDir()
	lancedbtest.RunNode(t, "structs.mjs", out)
	for _, v := range []struct{ format, other string }{{"2.1", "2.2"}, {"2.2", "2.1"}} {
		t.Run(v.format, func(t *testing.T) {
			table := filepath.Join(out, "structs_"+v.format+".lance")
			b, err := os.ReadFile(filepath.Join(out, "structs_"+v.format+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var ans structsAnswer
			if err := json.Unmarshal(b, &ans); err != nil {
				t.Fatal(err)
			}
			if len(ans.Versions) != 5 {
				t.Fatalf("structs.mjs wrote %d versions, want 5", len(ans.Versions))
			}
			for _, va := range ans.Versions {
				code, got, errOut := runCLI("table", "schema", table, "--version", itoa(va.Version), "--json")
				if code != 0 || !jsonEqual(t, []byte(got), va.Schema) {
					t.Errorf("version %d: schema exit %d %s\n got %s\nwant %s", va.Version, code, errOut, got, va.Schema)
				}
				code, got, errOut = runCLI("table", "scan", table, "--version", itoa(va.Version))
				if code != 0 {
					t.Fatalf("version %d: scan exit %d: %s", va.Version, code, errOut)
				}
				compareRows(t, "version "+itoa(va.Version), got, va.Rows)
			}
			last := ans.Versions[len(ans.Versions)-1]
			dst := filepath.Join(t.TempDir(), "copy.lance")
			code, _, errOut := runCLI("table", "copy", table, dst, "--data-storage-version", v.other)
			if code != 0 {
				t.Fatalf("copy into %s: exit %d: %s", v.other, code, errOut)
			}
			raw := lancedbtest.RunNode(t, "query.mjs", dst, `{"select":null,"where":null}`)
			var lance struct {
				Rows []map[string]json.RawMessage
			}
			if err := json.Unmarshal(raw, &lance); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(normalize(t, lance.Rows), normalize(t, last.Rows)) {
				t.Errorf("LanceDB reads the %s copy with other rows than the source's", v.other)
			}
		})
	}
}

// compareRows compares jsonl output with LanceDB's rows, value by value.
func compareRows(t *testing.T, what, jsonl string, want []map[string]json.RawMessage) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(jsonl), "\n")
	if jsonl == "" {
		lines = nil
	}
	if len(lines) != len(want) {
		t.Fatalf("%s: %d rows, LanceDB %d", what, len(lines), len(want))
	}
	bad := 0
	for i, line := range lines {
		row, _ := decodeLine(t, []byte(line))
		for k, raw := range want[i] {
			w, _ := decodeLine(t, []byte(`{"v":`+string(raw)+`}`))
			if !reflect.DeepEqual(row[k], w["v"]) {
				if bad++; bad <= 5 {
					t.Errorf("%s row %d %s = %v, LanceDB %v", what, i, k, row[k], w["v"])
				}
			}
		}
	}
}

func normalize(t *testing.T, rows []map[string]json.RawMessage) []map[string]any {
	t.Helper()
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		var b bytes.Buffer
		json.NewEncoder(&b).Encode(r)
		out[i], _ = decodeLine(t, b.Bytes())
	}
	return out
}
