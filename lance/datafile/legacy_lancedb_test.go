package datafile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLanceDBLegacyTypes decodes every type LanceDB 0.39 writes in Lance
// file format 0.1 ("legacy") — 10 rows (one batch) and 3000 rows (several
// batches, so several pages per column), and a table whose nullability was
// altered after the file was written — and compares every value, by range,
// chunk and take, with what LanceDB returns for the same table.
func TestLanceDBLegacyTypes(t *testing.T) {
	out := generate(t, "legacy", "10,3000")
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			table := filepath.Join(out, "db", name+".lance")
			batches := checkLegacyLayout(t, table)
			t.Logf("%s: %d batches", name, batches)
			if strings.HasSuffix(name, "_3000") && batches < 2 {
				t.Errorf("the 3000-row file has %d batch, want several", batches)
			}
			checkTable(t, filepath.Join(out, "db", name+".lance"), filepath.Join(out, e.Name()))
		})
	}
	if n != 3 {
		t.Fatalf("types.mjs wrote %d legacy tables, want 3", n)
	}
}

// checkLegacyLayout checks that every data file of table is a legacy file
// and returns the largest number of batches one holds.
func checkLegacyLayout(t *testing.T, table string) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(table, "data", "*.lance"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no data files in %s: %v", table, err)
	}
	most := 0
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Open(bytes.NewReader(b), int64(len(b)), p)
		if err != nil {
			t.Fatal(err)
		}
		if major, minor := r.Version(); major != 0 || r.legacy == nil {
			t.Fatalf("%s: version %d.%d, want a legacy file", p, major, minor)
		}
		most = max(most, len(r.legacy.batches)-1)
	}
	return most
}
