package lance_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// TestLocateMatchesScan checks, on every version of every committed
// fixture, that Locate finds each live row where LanceDB's scan order puts
// it, in scan order, and reports ids that are not live as missing.
func TestLocateMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for _, name := range []string{"history_stable_v22", "history_plain_v22", "history_stable_v20", "v1_names_stable"} {
		tbl, err := lance.Open(context.Background(), vfs.OS(), filepath.Join(lancedbtest.FixturesDir(t), name+".lance"))
		if err != nil {
			t.Fatal(err)
		}
		refs, err := tbl.Versions(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range refs {
			m, err := tbl.Checkout(context.Background(), ref.Version)
			if err != nil {
				t.Fatal(err)
			}
			var want []lance.RowMeta
			m.ScanRowMeta(context.Background(), func(r lance.RowMeta) error { want = append(want, r); return nil })
			// Ask for a random third of the live rows plus ids that are not live.
			ask := roaring64.New()
			var expect []lance.RowMeta
			for _, r := range want {
				if rng.IntN(3) == 0 {
					ask.Add(r.RowID)
					expect = append(expect, r)
				}
			}
			absent := []uint64{1 << 50, 123456789}
			for _, id := range absent {
				ask.Add(id)
			}
			locs, missing, err := m.Locate(context.Background(), ask)
			if err != nil {
				t.Fatal(err)
			}
			if len(locs) != len(expect) {
				t.Fatalf("%s v%d: located %d rows, want %d", name, ref.Version, len(locs), len(expect))
			}
			for i, l := range locs {
				if l.RowID != expect[i].RowID || lance.RowAddr(l.Fragment.ID, l.Offset) != expect[i].RowAddr {
					t.Fatalf("%s v%d: location %d = id %d at %d/%d, want id %d at address %d", name, ref.Version, i, l.RowID, l.Fragment.ID, l.Offset, expect[i].RowID, expect[i].RowAddr)
				}
			}
			if !missing.Equals(roaring64.BitmapOf(absent...)) {
				t.Fatalf("%s v%d: missing = %v, want %v", name, ref.Version, missing.ToArray(), absent)
			}
		}
	}
}
