package lance_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// TestDeletionCache: consecutive change sets over deletes in one fragment
// read each deletion file once (the one at the start of a span is the one
// the span before ended with), and give what a fresh handle gives.
func TestDeletionCache(t *testing.T) {
	ctx := context.Background()
	tt := createBase(t, "2.2", idRange(0, 100))
	var mu sync.Mutex
	var read []string
	counting := vfs.NewCountingFS(vfs.OS(), func(name string) {
		if strings.Contains(name, "/_deletions/") {
			mu.Lock()
			read = append(read, name)
			mu.Unlock()
		}
	})
	tbl, err := lance.Open(ctx, counting, tt.root)
	if err != nil {
		t.Fatal(err)
	}
	from := mustLatest(t, tbl).Version
	for i, id := range []uint64{5, 7, 9, 11} {
		if _, err := tt.tbl.Commit(ctx, mustLatest(t, tt.tbl), &lance.Commit{DeleteRowIDs: roaring64.BitmapOf(id)}); err != nil {
			t.Fatal(err)
		}
		to := mustLatest(t, tbl).Version
		mu.Lock()
		read = nil
		mu.Unlock()
		cs, err := tbl.Changes(ctx, from, to)
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := wrOpenTable(t, tt.root).Changes(ctx, from, to)
		if err != nil {
			t.Fatal(err)
		}
		if !cs.Deleted.Equals(roaring64.BitmapOf(id)) || !cs.Deleted.Equals(fresh.Deleted) || !cs.Inserted.Equals(fresh.Inserted) || !cs.Updated.Equals(fresh.Updated) {
			t.Fatalf("changes %d..%d: deleted %v (fresh handle %v), want [%d]", from, to, cs.Deleted, fresh.Deleted, id)
		}
		mu.Lock()
		n := len(read)
		mu.Unlock()
		if want := 1; n != want {
			t.Fatalf("delete %d: changes %d..%d read %d deletion files %v, want %d", i, from, to, n, read, want)
		}
		from = to
	}
	// A span over two deletes reads what the cache does not hold.
	cs, err := tbl.Changes(ctx, from-2, from)
	if err != nil {
		t.Fatal(err)
	}
	if !cs.Deleted.Equals(roaring64.BitmapOf(9, 11)) {
		t.Fatalf("changes %d..%d: deleted %v, want [9 11]", from-2, from, cs.Deleted)
	}
}
