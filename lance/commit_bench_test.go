package lance_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// BenchmarkCommitAppend1 commits one one-row fragment per iteration, the
// way a view refresh does (data file sync deferred to the commit), on a
// table that starts with 1 fragment (-frags=1) or 500. MVD: with
// vfs.Unsynced the figure is the commit's CPU and metadata operations;
// over the OS it includes the grouped syncs.
func BenchmarkCommitAppend1(b *testing.B) {
	for _, c := range []struct {
		name  string
		fsys  vfs.FS
		frags int
	}{{"fsync/frags=1", vfs.OS(), 1}, {"nosync/frags=1", vfs.Unsynced(vfs.OS()), 1}, {"nosync/frags=500", vfs.Unsynced(vfs.OS()), 500}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			schema, err := lance.NewSchemaFromArrow(baseSchema)
			if err != nil {
				b.Fatal(err)
			}
			root := filepath.Join(b.TempDir(), "c.lance")
			var frags []lance.NewFragment
			for i := range c.frags {
				nf, err := datawriter.WriteFragments(c.fsys, root, schema, "2.2", []arrow.RecordBatch{baseRecord(idRange(int64(i), int64(i+1)))})
				if err != nil {
					b.Fatal(err)
				}
				frags = append(frags, nf...)
			}
			tbl, s, err := lance.Create(ctx, c.fsys, root, lance.CreateOptions{Schema: schema, Fragments: frags})
			if err != nil {
				b.Fatal(err)
			}
			rec := baseRecord(idRange(10000, 10001))
			for b.Loop() {
				batch := vfs.NewSyncBatch(c.fsys)
				w := datawriter.NewFragmentWriter(c.fsys, root, s.Schema, s.DataFileVersion)
				w.DeferSync(batch)
				rec.Retain()
				if err := w.Write(rec); err != nil {
					b.Fatal(err)
				}
				nf, err := w.Finish()
				if err != nil {
					b.Fatal(err)
				}
				if s, err = tbl.Commit(ctx, s, &lance.Commit{Fragments: nf, Pending: batch}); err != nil {
					b.Fatal(err)
				}
				if s, err = tbl.Latest(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
