package matview

import (
	"context"
	"fmt"
	"path"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// newFragmentedSource creates a source of frags one-row fragments, the
// shape LanceDB's single-row commits leave behind.
func newFragmentedSource(t testing.TB, dir, name string, frags int) *goSource {
	t.Helper()
	ls, err := lance.NewSchemaFromArrow(srcSchema)
	if err != nil {
		t.Fatal(err)
	}
	root := path.Join(dir, name+lance.TableSuffix)
	var all []lance.NewFragment
	for i := range int64(frags) {
		rec := rowsBatch(i, i+1)
		fs, err := datawriter.WriteFragments(vfs.OS(), root, ls, "2.2", []arrow.RecordBatch{rec})
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, fs...)
	}
	tbl, _, err := lance.Create(context.Background(), vfs.OS(), root, lance.CreateOptions{Schema: ls, Fragments: all})
	if err != nil {
		t.Fatal(err)
	}
	return &goSource{t: tbl, dir: dir, name: name}
}

// BenchmarkRefreshOneRowFragmentedSource measures the incremental refresh
// of an all-rows view after a one-row append to a source of 100 and 3,000
// one-row fragments (issue 22: freshness must not follow the source's
// fragment count).
func BenchmarkRefreshOneRowFragmentedSource(b *testing.B) {
	for _, n := range []int{100, 3000} {
		b.Run(fmt.Sprintf("frags=%d", n), func(b *testing.B) {
			ctx := context.Background()
			dir := b.TempDir()
			src := newFragmentedSource(b, dir, "src", n)
			db := openDB(b, dir)
			v, err := db.CreateView(ctx, "v", "src", Definition{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := v.Refresh(ctx, RefreshOptions{}); err != nil {
				b.Fatal(err)
			}
			next := int64(n)
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				src.append(b, next, next+1)
				next++
				b.StartTimer()
				r, err := v.Refresh(ctx, RefreshOptions{})
				if err != nil || r.Mode != ModeIncremental {
					b.Fatalf("%+v %v", r, err)
				}
			}
		})
	}
}

// BenchmarkListViewsFragmentedSource lists the views of a database whose
// source holds 3,000 one-row fragments, as every view's cleanup does (the
// views over a view hold back its cleanup): the listing reads each
// table's schema, and must not pay for the source's fragments (issue 22).
func BenchmarkListViewsFragmentedSource(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	src := newFragmentedSource(b, dir, "src", 3000)
	db := openDB(b, dir)
	for _, name := range []string{"v1", "v2"} {
		v, err := db.CreateView(ctx, name, "src", Definition{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := v.Refresh(ctx, RefreshOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	next := int64(3000)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		src.append(b, next, next+1) // a new source version, as between two cleanups
		next++
		b.StartTimer()
		views, err := db.ListViews(ctx)
		if err != nil || len(views) != 2 {
			b.Fatalf("%d views, %v", len(views), err)
		}
	}
}
