package matview

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
)

// TestLegacySource keeps views over a source LanceDB writes in Lance file
// format 0.1 ("legacy", the default before 2.0): the first refresh builds
// each view, appends, deletes and updates are applied incrementally, and a
// final full rebuild gives the same rows; after every refresh LanceDB
// checks that the view holds its definition evaluated on the source.
func TestLegacySource(t *testing.T) {
	lancedbtest.Require(t)
	ctx := context.Background()
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	db := openDB(t, dir)
	src := "legacy_src"
	if _, err := d.CreateTableWith(src, lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, lancedbtest.InitialRows, 0),
		lancedbtest.CreateOptions{StorageOptions: map[string]string{"new_table_data_storage_version": "legacy"}}); err != nil {
		t.Fatal(err)
	}
	st, err := lance.Open(ctx, db.fs, db.root(src))
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.Checkout(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if m.DataFileVersion != lance.Legacy {
		t.Fatalf("LanceDB wrote a %q source, want legacy", m.DataFileVersion)
	}
	var views []string
	for _, shape := range lancedbtest.ViewShapes(src) {
		if shape.Name == "limited" {
			continue // capped views are checked by their own tests
		}
		for _, v := range shape.Views {
			vn := fmt.Sprintf("%s_%s", shape.Name, v.Name)
			source := v.Source
			if source != src {
				source = fmt.Sprintf("%s_%s", shape.Name, source)
			}
			if _, err := db.CreateView(ctx, vn, source, toDefinition(v.Spec)); err != nil {
				t.Fatalf("create %s: %v", vn, err)
			}
			views = append(views, vn)
		}
	}
	refreshAll := func(step string, full bool, want Mode) {
		t.Helper()
		for _, vn := range views {
			v, err := db.OpenView(ctx, vn)
			if err != nil {
				t.Fatal(err)
			}
			r, err := v.Refresh(ctx, RefreshOptions{Full: full})
			if err != nil {
				t.Fatalf("after %s: refresh %s: %v", step, vn, err)
			}
			if r.Mode != want {
				t.Fatalf("after %s: refresh %s was %s (%s), want %s", step, vn, r.Mode, r.Reason, want)
			}
			if err := d.CheckView(vn, r.SourceVersion); err != nil {
				t.Fatalf("after %s: view %s (%+v): %v", step, vn, r, err)
			}
		}
	}
	refreshAll("create", false, ModeRebuild)
	gen := lancedbtest.NewOpGen()
	var done []string
	for _, k := range []lancedbtest.OpKind{lancedbtest.Append, lancedbtest.Delete, lancedbtest.UpdateAcrossFilter,
		lancedbtest.UpdateUnreadColumn, lancedbtest.MergeUpsert, lancedbtest.Append} {
		op := gen.Next(k)
		if _, err := d.Apply(src, op); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		done = append(done, op.String())
		refreshAll(strings.Join(done, ", "), false, ModeIncremental)
	}
	refreshAll("the ops", true, ModeRebuild)
}
