package matview

import (
	"context"
	"testing"

	"github.com/mvd-project/mvd/vfs"
)

// TestViewsShareTheSourceHandle: the views over one source read it
// through one handle, so a source version is decoded once however many
// views reflect it (a source of one-row LanceDB commits holds a fragment
// per commit: decoding its manifest once per view cost each refresh as
// much as the rest; issue 22).
func TestViewsShareTheSourceHandle(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := newGoSource(t, vfs.OS(), dir, "src", 100)
	db := openDB(t, dir)
	var views []*View
	for _, name := range []string{"a", "b", "c"} {
		v, err := db.CreateView(ctx, name, "src", Definition{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Refresh(ctx, RefreshOptions{}); err != nil {
			t.Fatal(err)
		}
		views = append(views, v)
	}
	for i := int64(0); i < 3; i++ {
		src.append(t, 100+i, 101+i)
		misses := uint64(0)
		for _, v := range views {
			before := v.src.ManifestCacheStats().Misses
			r, err := v.Refresh(ctx, RefreshOptions{})
			if err != nil || r.Mode != ModeIncremental {
				t.Fatalf("refresh of %s: %+v, %v", v.name, r, err)
			}
			misses += v.src.ManifestCacheStats().Misses - before
		}
		if misses > 1 {
			t.Fatalf("after commit %d the source's manifests were decoded %d times for 3 views, want once", i, misses)
		}
	}
}
