package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
)

// TestScanQueryMatchesLanceDB runs `mvd table scan --select/--where` and
// LanceDB's query().select().where() on the same fixture and compares the
// rows, the values and the column types.
func TestScanQueryMatchesLanceDB(t *testing.T) {
	lancedbtest.Require(t)
	table, _ := fixture(t, "history_stable_v21")
	cases := []struct {
		sel   [][2]string // alias, expression; nil = all columns
		where string
	}{
		{nil, "id >= 600 AND val < 0"},
		{[][2]string{{"id", "id"}, {"shout", "upper(name)"}, {"dbl", "val * 2"}}, "id > 100 AND name IS NOT NULL"},
		{[][2]string{{"n", "name"}, {"len", "length(name)"}}, "name LIKE 'n-1%'"},
		{[][2]string{{"id", "id"}, {"bucket", "id % 7"}, {"half", "id / 2"}}, "id BETWEEN 10 AND 60 OR id IN (700, 701)"},
		{[][2]string{{"id", "id"}, {"v", "coalesce(name, 'none')"}}, "name IS NULL"},
		{[][2]string{{"x", "doubled - val"}}, ""},
	}
	for _, c := range cases {
		var sel []string
		for _, p := range c.sel {
			sel = append(sel, p[1]+" AS "+p[0])
		}
		args := []string{"table", "scan", table}
		if sel != nil {
			args = append(args, "--select", strings.Join(sel, ", "))
		}
		if c.where != "" {
			args = append(args, "--where", c.where)
		}
		code, out, errOut := runCLI(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		q, _ := json.Marshal(map[string]any{"select": c.sel, "where": nilIfEmpty(c.where)})
		if c.sel == nil {
			q, _ = json.Marshal(map[string]any{"select": nil, "where": nilIfEmpty(c.where)})
		}
		raw := lancedbtest.RunNode(t, "query.mjs", table, string(q))
		var ans struct {
			Error  string
			Schema struct {
				Fields []struct {
					Name, Type string
					Nullable   bool
				}
			}
			Rows []map[string]json.RawMessage
		}
		if err := json.Unmarshal(raw, &ans); err != nil || ans.Error != "" {
			t.Fatalf("LanceDB on %s: %v %s", q, err, ans.Error)
		}
		lines := bytes.Split(bytes.TrimSpace([]byte(out)), []byte("\n"))
		if len(out) == 0 {
			lines = nil
		}
		if len(lines) != len(ans.Rows) {
			t.Fatalf("%v: %d rows, LanceDB %d", args, len(lines), len(ans.Rows))
		}
		for i, line := range lines {
			row, keys := decodeLine(t, line)
			if len(keys) != len(ans.Schema.Fields) {
				t.Fatalf("%v: columns %v, LanceDB %v", args, keys, ans.Schema.Fields)
			}
			for j, f := range ans.Schema.Fields {
				if keys[j] != f.Name {
					t.Fatalf("%v: column %d is %q, LanceDB %q", args, j, keys[j], f.Name)
				}
				want, _ := decodeLine(t, []byte(`{"v":`+string(ans.Rows[i][f.Name])+`}`))
				if !reflect.DeepEqual(row[f.Name], want["v"]) {
					t.Fatalf("%v: row %d %s = %v, LanceDB %v", args, i, f.Name, row[f.Name], want["v"])
				}
			}
		}
		// Types: the same as LanceDB's, checked through the arrow output.
		code, schemaOut, _ := runCLI(append(args, "--format", "arrow", "--limit", "0")...)
		if code != 0 {
			t.Fatal("arrow output failed")
		}
		types := arrowTypes(t, schemaOut)
		for j, f := range ans.Schema.Fields {
			if types[j] != f.Type {
				t.Errorf("%v: column %s has type %s, LanceDB %s", args, f.Name, types[j], f.Type)
			}
		}
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
