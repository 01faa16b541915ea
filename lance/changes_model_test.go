package lance_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
)

// randomHistory returns n random LanceDB operations over a table whose ids
// start at 0..99: appends, updates, deletes, merge_inserts (updating some
// ids, inserting others) and compactions.
func randomHistory(rng *rand.Rand, n int) []map[string]any {
	next := 1000
	var ops []map[string]any
	for i := 0; i < n; i++ {
		lo := rng.IntN(next)
		switch rng.IntN(5) {
		case 0:
			ops = append(ops, map[string]any{"op": "add", "start": next, "n": 1 + rng.IntN(20)})
			next += 100
		case 1:
			ops = append(ops, map[string]any{"op": "update", "where": fmt.Sprintf("id >= %d AND id < %d", lo, lo+1+rng.IntN(30)), "values": map[string]string{"val": "val + 1"}})
		case 2:
			ops = append(ops, map[string]any{"op": "delete", "where": fmt.Sprintf("id >= %d AND id < %d", lo, lo+1+rng.IntN(10))})
		case 3:
			ids := []int{next, lo, rng.IntN(next)}
			next += 100
			ops = append(ops, map[string]any{"op": "merge_insert", "on": "id", "ids": ids, "variant": 1 + rng.IntN(3)})
		case 4:
			ops = append(ops, map[string]any{"op": "optimize"})
		}
	}
	return ops
}

// TestChangesModel is the change-set model test: for random commit
// histories made by LanceDB 0.39, Changes(N, M) equals, for every pair of
// versions N <= M, the difference of the rows ScanRowMeta reports at N and
// at M: inserted = live at M only, deleted = live at N only, updated =
// live at both and last updated after N. Rows whose last-updated version
// changed between N and M must be among the updated ones, and rows updated
// after N keep their identity (the same row id at both versions).
func TestChangesModel(t *testing.T) {
	lancedbtest.Require(t)
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 99))
			tt := createBase(t, "2.2", idRange(0, 100))
			last := wrLanceDBOps(t, tt.root, randomHistory(rng, 12)...)
			// The oracle's own reading agrees with LanceDB's at the end.
			wrSameRowMeta(t, tt.tbl, wrLanceDBRead(t, tt.root))
			ctx := context.Background()
			snaps := map[uint64]*lance.Snapshot{}
			rows := map[uint64]map[uint64]lance.RowMeta{}
			for v := uint64(1); v <= last; v++ {
				s := tt.at(v)
				snaps[v] = s
				rows[v] = map[uint64]lance.RowMeta{}
				if err := s.ScanRowMeta(ctx, func(r lance.RowMeta) error {
					if _, dup := rows[v][r.RowID]; dup {
						return fmt.Errorf("row id %d is live twice", r.RowID)
					}
					rows[v][r.RowID] = r
					return nil
				}); err != nil {
					t.Fatalf("version %d: %v", v, err)
				}
			}
			pairs := 0
			for n := uint64(1); n <= last; n++ {
				for m := n; m <= last; m++ {
					cs, err := lance.Changes(ctx, snaps[n], snaps[m])
					if err != nil {
						t.Fatalf("changes %d..%d: %v", n, m, err)
					}
					ins, del, upd := roaring64.New(), roaring64.New(), roaring64.New()
					for id, r := range rows[m] {
						old, ok := rows[n][id]
						switch {
						case !ok:
							ins.Add(id)
						case r.LastUpdatedAt > n:
							upd.Add(id)
						case r.LastUpdatedAt != old.LastUpdatedAt:
							t.Fatalf("changes %d..%d: row %d last updated at %d then %d, not after %d", n, m, id, old.LastUpdatedAt, r.LastUpdatedAt, n)
						}
					}
					for id := range rows[n] {
						if _, ok := rows[m][id]; !ok {
							del.Add(id)
						}
					}
					for _, c := range []struct {
						what      string
						got, want *roaring64.Bitmap
					}{{"inserted", cs.Inserted, ins}, {"deleted", cs.Deleted, del}, {"updated", cs.Updated, upd}} {
						if !c.got.Equals(c.want) {
							t.Fatalf("changes %d..%d: %s = %v, ScanRowMeta says %v", n, m, c.what, head(c.got), head(c.want))
						}
					}
					pairs++
				}
			}
			t.Logf("%d versions, %d pairs checked", last, pairs)
		})
	}
}

func head(b *roaring64.Bitmap) []uint64 {
	a := b.ToArray()
	if len(a) > 10 {
		a = a[:10]
	}
	return a
}
