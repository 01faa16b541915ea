package datawriter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// TestCopyLanceDBTypesTables is the writer's differential test over every
// type mvd's reader is tested with: the tables testdata/lancedb/types.mjs
// has LanceDB write (scalars of every width and unit, decimals, times,
// durations, strings short and long, lists, nested lists, lists of
// structs, structs of lists and vectors, vectors, dictionaries, all-null
// and constant columns) are read with mvd, written again with the writer
// (into their own version, and the 2.2 table also into 2.1), and LanceDB
// must read the copy exactly as it reads the original.
func TestCopyLanceDBTypesTables(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	out := t.TempDir()
	lancedbtest.RunNode(t, "types.mjs", out, "2.0,2.1,2.2", "300")
	for _, c := range []struct{ from, to string }{{"2.2", "2.2"}, {"2.1", "2.1"}, {"2.0", "2.0"}, {"2.2", "2.1"}} {
		t.Run(c.from+"to"+c.to, func(t *testing.T) {
			t.Parallel()
			src := filepath.Join(out, "db", fmt.Sprintf("t_%s_300.lance", c.from))
			dst := filepath.Join(t.TempDir(), "copy.lance")
			copyTable(t, src, dst, lance.FileVersion(c.to))
			// Every column by name, but timestamps as their integers: the
			// harness renders only years 0000-9999, and types.mjs stores
			// seconds-unit values far beyond.
			as, err := lance.Open(context.Background(), vfs.OS(), src)
			if err != nil {
				t.Fatal(err)
			}
			m, err := as.Checkout(context.Background(), 0)
			if err != nil {
				t.Fatal(err)
			}
			cols := map[string]string{}
			for _, f := range m.Schema.Fields {
				cols[f.Name] = f.Name
				if strings.HasPrefix(f.LogicalType, "timestamp") {
					cols[f.Name] = "CAST(" + f.Name + " AS BIGINT)"
				}
			}
			want, got := lanceDBSelect(t, src, cols), lanceDBSelect(t, dst, cols)
			if len(got) != len(want) || len(want) != 300 {
				t.Fatalf("LanceDB reads %d rows of the copy, %d of the original", len(got), len(want))
			}
			bad := 0
			for r := range want {
				for col, w := range want[r] {
					if g := got[r][col]; !sameValue(t, arrow.Null, g, w) {
						if bad++; bad <= 5 {
							t.Errorf("row %d column %q: LanceDB reads %s from the copy, %s from the original", r, col, g, w)
						}
					}
				}
			}
		})
	}
}

// lanceDBSelect returns every row of a SQL projection LanceDB runs on a
// table (interop.mjs "select").
func lanceDBSelect(t *testing.T, table string, cols map[string]string) []map[string]json.RawMessage {
	t.Helper()
	var out struct {
		Results [][]map[string]json.RawMessage `json:"results"`
	}
	b := lancedbtest.RunNode(t, "interop.mjs", "ops", table, mustJSON(t, []map[string]any{{"op": "select", "columns": cols}}))
	if err := json.Unmarshal(b, &out); err != nil || len(out.Results) != 1 {
		t.Fatalf("decode interop select: %v\n%s", err, b)
	}
	return out.Results[0]
}

// copyTable scans the latest version of src with mvd and writes its rows
// as a new table at dst in the given data file version.
func copyTable(t *testing.T, src, dst string, version lance.FileVersion) {
	t.Helper()
	tbl, err := lance.Open(context.Background(), vfs.OS(), src)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tbl.Checkout(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := m.Scan(context.Background(), lance.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	w := datawriter.NewFragmentWriter(vfs.OS(), dst, m.Schema, version)
	for {
		rec, err := sc.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		err = w.Write(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	frags, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := lance.Create(context.Background(), vfs.OS(), dst, lance.CreateOptions{Schema: m.Schema, Fragments: frags, DataFileVersion: version}); err != nil {
		t.Fatal(err)
	}
}
