package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/mvd-project/mvd/arrowjson"
)

func decodeLine(t *testing.T, line []byte) (map[string]any, []string) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var row map[string]any
	if err := dec.Decode(&row); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	// Key order, which maps lose: read the tokens again.
	var keys []string
	tok := json.NewDecoder(bytes.NewReader(line))
	tok.Token()
	for tok.More() {
		k, _ := tok.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		tok.Decode(&skip)
	}
	return row, keys
}

// TestScanJSONL checks `mvd table scan` against LanceDB's rows for every
// version of a fixture whose answers carry data.
func TestScanJSONL(t *testing.T) {
	table, ans := fixture(t, "history_stable_v21")
	for _, va := range ans.Versions {
		code, out, errOut := runCLI("table", "scan", table, "--version", itoa(va.Version), "--with-row-ids")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		lines := bytes.Split(bytes.TrimSpace([]byte(out)), []byte("\n"))
		if uint64(len(lines)) != va.NumRows {
			t.Fatalf("version %d: %d lines, LanceDB %d rows", va.Version, len(lines), va.NumRows)
		}
		for i, line := range lines {
			row, keys := decodeLine(t, line)
			var schema struct{ Fields []struct{ Name string } }
			json.Unmarshal(va.Schema, &schema)
			var wantKeys []string
			for _, f := range schema.Fields {
				wantKeys = append(wantKeys, f.Name)
			}
			wantKeys = append(wantKeys, "_rowid", "_rowaddr", "_row_created_at_version", "_row_last_updated_at_version")
			if !reflect.DeepEqual(keys, wantKeys) {
				t.Fatalf("keys %v, want %v", keys, wantKeys)
			}
			for k, raw := range va.Data[i] {
				want, _ := decodeLine(t, []byte(`{"v":`+string(raw)+`}`))
				if !reflect.DeepEqual(row[k], want["v"]) {
					t.Fatalf("version %d row %d %s = %v, LanceDB %v", va.Version, i, k, row[k], want["v"])
				}
			}
			if id, _ := row["_rowid"].(json.Number).Int64(); uint64(id) != va.Rows["_rowid"][i] {
				t.Fatalf("version %d row %d: _rowid %d, LanceDB %d", va.Version, i, id, va.Rows["_rowid"][i])
			}
		}
	}
}

func TestScanFormats(t *testing.T) {
	table, ans := fixture(t, "history_stable_v21")
	last := ans.Versions[len(ans.Versions)-1]
	code, out, errOut := runCLI("table", "scan", table, "--format", "arrow", "--columns", "id,name")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rd, err := ipc.NewReader(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for rd.Next() {
		rows += rd.RecordBatch().NumRows()
	}
	if rd.Err() != nil || uint64(rows) != last.NumRows || rd.Schema().NumFields() != 2 {
		t.Fatalf("arrow stream: %d rows (want %d), %d fields, err %v", rows, last.NumRows, rd.Schema().NumFields(), rd.Err())
	}
	code, out, _ = runCLI("table", "scan", table, "--format", "table", "--limit", "4")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || len(lines) != 5 || !strings.HasPrefix(lines[0], "id") {
		t.Fatalf("table format: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI("table", "scan", table, "--limit", "0")
	if code != 0 || out != "" {
		t.Fatalf("--limit 0: exit %d, %q", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"table", "scan", table, "--columns", "id,nope"}, `no column "nope"`},
		{[]string{"table", "scan", table, "--format", "csv"}, "--format"},
		{[]string{"table", "scan", table, "--limit", "-5"}, "--limit"},
	} {
		code, out, errOut := runCLI(tc.args...)
		if code == 0 || out != "" || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", tc.args, code, out, errOut)
		}
	}
}

// arrowTypes reads the schema of an Arrow IPC stream and returns its
// canonical type names.
func arrowTypes(t *testing.T, stream string) []string {
	t.Helper()
	rd, err := ipc.NewReader(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Release()
	var out []string
	for _, f := range rd.Schema().Fields() {
		s, err := arrowjson.TypeString(f.Type)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}
