package cdc

import (
	"context"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// TestLanceDBWriter: LanceDB 0.39 creates a table and runs every kind of
// operation on it (append, delete, updates, merge_insert upserts and
// deletes, compaction, add column, overwrite) while the watcher runs.
// Every version LanceDB made is reported once, in order, with the change
// set computed independently between the same two versions, in both modes.
func TestLanceDBWriter(t *testing.T) {
	for _, mode := range []Mode{ModeNotify, ModePoll} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := t.TempDir()
			d := lancedbtest.StartDriver(t, dir)
			c := startWatcher(t, Options{Dir: dir, Mode: mode})
			c.w.Watch("events", 1)
			c.waitFor("synced", hasEvent(KindSynced, "", 0))
			if _, err := d.CreateTable("events", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, lancedbtest.InitialRows, 0)); err != nil {
				t.Fatal(err)
			}
			gen := lancedbtest.NewOpGen()
			var last uint64
			for round := 0; round < 2; round++ {
				for _, kind := range lancedbtest.OpKinds {
					v, err := d.Apply("events", gen.Next(kind))
					if err != nil {
						t.Fatalf("%v: %v", kind, err)
					}
					last = v
				}
			}
			evs := c.waitFor("LanceDB's last version", hasEvent(KindVersion, "events", last))
			if added := ofTable(evs, "events", KindAdded); len(added) != 1 {
				t.Fatalf("added events: %v", added)
			}
			vs := ofTable(evs, "events", KindVersion)
			checkContiguous(t, vs, 1, last)
			ctx := context.Background()
			tbl, err := lance.Open(ctx, vfs.OS(), dir+"/events.lance")
			if err != nil {
				t.Fatal(err)
			}
			ops := map[string]int{}
			for _, ev := range vs {
				ops[ev.Operation]++
				want, err := tbl.Changes(ctx, ev.From, ev.To)
				if err != nil {
					t.Fatal(err)
				}
				if !want.Inserted.Equals(ev.Changes.Inserted) || !want.Updated.Equals(ev.Changes.Updated) || !want.Deleted.Equals(ev.Changes.Deleted) {
					t.Errorf("%v: change set differs from Changes(%d, %d)", ev, ev.From, ev.To)
				}
			}
			for _, op := range []string{"append", "update", "delete", "rewrite", "merge", "overwrite"} {
				if ops[op] == 0 {
					t.Errorf("no %s version seen (ops %v)", op, ops)
				}
			}
		})
	}
}
