package cdc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// TestLanceDBWriter: LanceDB 0.39 creates a table and appends, updates,
// deletes, merge-inserts and compacts while the watcher runs. Every
// version LanceDB made is reported once, in order, with the change set
// computed independently between the same two versions.
func TestLanceDBWriter(t *testing.T) {
	lancedbtest.Require(t)
	script, err := os.ReadFile("testdata/writer.mjs")
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Mode{ModeNotify, ModePoll} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := t.TempDir()
			c := startWatcher(t, Options{Dir: dir, Mode: mode})
			c.w.Watch("events", 0)
			c.waitFor("synced", hasEvent(KindSynced, "", 0))
			out := lancedbtest.RunNode(t, "--input-type=module", "-e", string(script), dir, "events", "24")
			var last uint64
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				var line struct{ Version uint64 }
				if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
					t.Fatalf("writer said %q: %v", sc.Text(), err)
				}
				last = line.Version
			}
			evs := c.waitFor("LanceDB's last version", hasEvent(KindVersion, "events", last))
			added := ofTable(evs, "events", KindAdded)
			if len(added) != 1 {
				t.Fatalf("added events: %v", added)
			}
			vs := ofTable(evs, "events", KindVersion)
			checkContiguous(t, vs, added[0].To, last)
			tbl, err := lance.Open(context.Background(), vfs.OS(), dir+"/events.lance")
			if err != nil {
				t.Fatal(err)
			}
			ops := map[string]int{}
			for _, ev := range vs {
				ops[ev.Operation]++
				want, err := tbl.Changes(context.Background(), ev.From, ev.To)
				if err != nil {
					t.Fatal(err)
				}
				if !want.Inserted.Equals(ev.Changes.Inserted) || !want.Updated.Equals(ev.Changes.Updated) || !want.Deleted.Equals(ev.Changes.Deleted) {
					t.Errorf("%v: change set differs from Changes(%d, %d)", ev, ev.From, ev.To)
				}
			}
			for _, op := range []string{"append", "update", "delete", "rewrite"} {
				if ops[op] == 0 {
					t.Errorf("no %s version seen (ops %v)", op, ops)
				}
			}
		})
	}
}
