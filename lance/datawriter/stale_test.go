package datawriter_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
)

// TestStaleLanceDBHandle opens the table in LanceDB, then lets mvd commit a
// delete-and-append, then has LanceDB's now stale handle delete another row
// of the same fragment, update a row and append. LanceDB must read mvd's
// transaction (inline in its manifest: mvd writes no .txn file) and rebase
// over it (or retry): every change of both sides is in the final table.
func TestStaleLanceDBHandle(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	tt := createBase(t, "2.2", idRange(0, 100))
	ops, _ := json.Marshal([]map[string]any{
		{"op": "count"},
		{"op": "wait"},
		{"op": "delete", "where": "id = 50"},
		{"op": "update", "where": "id = 60", "values": map[string]string{"name": "'changed'"}},
		{"op": "add", "start": 500, "n": 3},
	})
	cmd := exec.Command("node", "interop.mjs", "ops", tt.root, string(ops))
	cmd.Dir = lancedbtest.HarnessDir(t)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var errText strings.Builder
	sc := bufio.NewScanner(stderr)
	waiting := false
	for !waiting && sc.Scan() {
		if waiting = strings.Contains(sc.Text(), "interop: waiting"); !waiting {
			errText.WriteString(sc.Text() + "\n")
		}
	}
	if !waiting {
		t.Fatalf("LanceDB ended before waiting: %v\n%s", cmd.Wait(), errText.String())
	}
	// LanceDB holds version 1. mvd deletes rows 10 and 11 and appends one.
	m, err := tt.tbl.Checkout(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	del, err := rowIDsByScan(tt.tbl, m, 10, 11)
	if err != nil {
		t.Fatal(err)
	}
	// The transaction is in the manifest only: LanceDB rebases from it.
	// Both commits are prepared, so the second fills a staging file
	// written ahead, padded between its transaction and its manifest.
	t.Cleanup(func() {
		if err := tt.tbl.Flush(); err != nil {
			t.Error(err)
		}
	})
	for _, c := range []*lance.Commit{{DeleteRowIDs: del}, {Fragments: tt.write([]int64{1000})}} {
		c.Prepared = tt.tbl.Prepare()
		mc := tt.commit(0, c)
		c.Prepared.Release()
		if mc.TransactionFile != "" {
			t.Fatalf("mvd wrote a transaction file %s", mc.TransactionFile)
		}
		if c.Fragments != nil {
			if fi, err := os.Stat(filepath.Join(tt.root, "_versions", mc.File)); err != nil || fi.Size()%4096 != 0 {
				t.Logf("version %d is not padded to whole pages (%v): no unnamed staging files here?", mc.Version, err)
			}
		}
	}
	if _, err := stdin.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	// Read stderr to its end before Wait, which closes the pipe.
	for sc.Scan() {
		errText.WriteString(sc.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("LanceDB: %v\n%s", err, errText.String())
	}
	final := lanceDBRead(t, tt.root)
	ids := viewIDs(t, final)
	slices.Sort(ids)
	want := slices.DeleteFunc(idRange(0, 100), func(id int64) bool { return id == 10 || id == 11 || id == 50 })
	want = append(want, 500, 501, 502, 1000)
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("final table has ids %v..., want %d rows", ids[:min(5, len(ids))], len(want))
	}
	for i, r := range final.Data {
		if string(r["id"]) == "60" && string(r["name"]) != `"changed"` {
			t.Errorf("row 60 = %s, want LanceDB's update", final.Data[i]["name"])
		}
	}
	checkRowMeta(t, tt.tbl, final)
	var res struct {
		Retries int `json:"retries"`
	}
	_ = json.Unmarshal(stdout.Bytes(), &res)
	t.Logf("LanceDB retried %d operations", res.Retries)
}
