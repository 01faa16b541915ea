package lance_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// TestHeadSchema: the schema HeadSchema decodes (without the fragments)
// is the schema of the decoded manifest, for LanceDB-written tables and
// for a version whose schema metadata a commit changed, read fresh or
// from the cache of a manifest decoded before.
func TestHeadSchema(t *testing.T) {
	ctx := context.Background()
	check := func(name string, tbl *lance.Table) {
		t.Helper()
		h, err := tbl.Head(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tbl.HeadSchema(ctx, h)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := tbl.Checkout(ctx, h.Version)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want.Schema) {
			t.Fatalf("%s: HeadSchema %+v, manifest's schema %+v", name, got, want.Schema)
		}
		again, err := tbl.HeadSchema(ctx, h) // the manifest is cached now
		if err != nil || !reflect.DeepEqual(again, want.Schema) {
			t.Fatalf("%s: cached: %+v, %v", name, again, err)
		}
	}
	for _, name := range []string{"history_stable_v22", "v1_names_stable"} {
		tbl, err := lance.Open(ctx, vfs.OS(), filepath.Join("..", "testdata", "fixtures", name+".lance"))
		if err != nil {
			t.Fatal(err)
		}
		check(name, tbl)
	}
	tt := createBase(t, "2.2", idRange(0, 10))
	for i := range 3 {
		m := mustLatest(t, tt.tbl)
		if _, err := tt.tbl.Commit(ctx, m, &lance.Commit{SchemaMetadata: map[string]string{"step": itoa(i)}}); err != nil {
			t.Fatal(err)
		}
		check("created, step "+itoa(i), wrOpenTable(t, tt.root))
	}
}
