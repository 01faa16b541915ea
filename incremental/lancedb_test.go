package incremental

import (
	"context"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// TestStepLanceDBWrites: views kept by Step alone through LanceDB's writes
// (appends, updates of read and unread columns, merge_insert, deletes,
// compaction) hold a rebuild's rows after every write; capped ones in scan
// order. No write LanceDB makes puts a changed row before a kept one, so
// none rebuilds; an update of a column a view does not read leaves an
// uncapped view's rows as they are, and moves a capped view's.
func TestStepLanceDBWrites(t *testing.T) {
	lancedbtest.Require(t)
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	if _, err := d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 40, 0)); err != nil {
		t.Fatal(err)
	}
	src, err := lance.Open(context.Background(), vfs.OS(), d.TablePath("src"))
	if err != nil {
		t.Fatal(err)
	}
	views := map[string]*fixture{
		"capped":     newFixture(t, src, "id, amount", "amount > 30", limit(5)),
		"capped-all": newFixture(t, src, "id, name", "", limit(7)),
		"filtered":   newFixture(t, src, "id, upper(name) AS shout, amount", "amount > 30", nil),
		"all":        newFixture(t, src, "id, name", "", nil),
	}
	update := func(where string, set map[string]string) func() (uint64, error) {
		return func() (uint64, error) { r, err := d.Update("src", where, set); return r.Version, err }
	}
	writes := []struct {
		name string
		do   func() (uint64, error)
	}{
		{"append", func() (uint64, error) { return d.Add("src", lancedbtest.SourceRows(40, 46, 0)) }},
		{"update an unread column", update("id % 2 = 0", map[string]string{"score": "score + 1"})},
		{"update across the filter", update("id % 3 = 0", map[string]string{"amount": "100 - amount"})},
		{"upsert", func() (uint64, error) {
			r, err := d.Upsert("src", "id", lancedbtest.SourceRows(42, 48, 1))
			return r.Version, err
		}},
		{"delete", func() (uint64, error) { return d.Delete("src", "id % 5 = 1") }},
		{"compact", func() (uint64, error) { return d.Optimize("src") }},
		{"delete after compaction", func() (uint64, error) { return d.Delete("src", "id < 12") }},
	}
	for _, w := range writes {
		if _, err := w.do(); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		for name, f := range views {
			out := f.step()
			if out.Rebuild != "" {
				t.Fatalf("%s: view %s: rebuild: %s", w.name, name, out.Rebuild)
			}
			f.check(w.name + ": view " + name)
			if w.name == "update an unread column" {
				_, capped := f.plan.Limit()
				if unchanged := out.Unchanged > 0; unchanged == capped {
					t.Errorf("%s: view %s: %d rows unchanged", w.name, name, out.Unchanged)
				}
			}
		}
	}
}
