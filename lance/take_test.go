package lance_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// TestTakeMatchesScan takes random subsets of every version's rows by row
// id and compares them with the same rows of a full scan (itself checked
// against LanceDB by TestScanMatchesLanceDB).
func TestTakeMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, name := range []string{"history_stable_v21", "history_stable_v22", "history_stable_v20", "history_plain_v22"} {
		tbl, err := lance.Open(context.Background(), vfs.OS(), filepath.Join(lancedbtest.FixturesDir(t), name+".lance"))
		if err != nil {
			t.Fatal(err)
		}
		refs, _ := tbl.Versions(context.Background())
		for _, ref := range refs {
			m, err := tbl.Checkout(context.Background(), ref.Version)
			if err != nil {
				t.Fatal(err)
			}
			all := scanJSON(t, tbl, m, lance.ScanOptions{RowMeta: true})
			ids := roaring64.New()
			var want []map[string]any
			for _, r := range all {
				if rng.IntN(5) == 0 {
					id, _ := r[lance.ColRowID].(interface{ Int64() (int64, error) }).Int64()
					ids.Add(uint64(id))
					want = append(want, r)
				}
			}
			ids.Add(1 << 45) // not a row
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			batches, missing, err := m.TakeAll(context.Background(), ids, lance.ScanOptions{RowMeta: true, Mem: mem})
			if err != nil {
				t.Fatalf("%s v%d: %v", name, ref.Version, err)
			}
			var got []map[string]any
			for _, b := range batches {
				got = append(got, recordJSON(t, b)...)
				b.Release()
			}
			mem.AssertSize(t, 0)
			if len(got) != len(want) {
				t.Fatalf("%s v%d: took %d rows, want %d", name, ref.Version, len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("%s v%d: row %d = %v, want %v", name, ref.Version, i, got[i], want[i])
				}
			}
			if missing.GetCardinality() != 1 || !missing.Contains(1<<45) {
				t.Fatalf("%s v%d: missing = %v", name, ref.Version, missing.ToArray())
			}
		}
	}
}
