package lance_test

import (
	"context"
	"io"
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

func rowNum(t *testing.T, r map[string]any, col string) uint64 {
	t.Helper()
	n, err := r[col].(interface{ Int64() (int64, error) }).Int64()
	if err != nil {
		t.Fatal(err)
	}
	return uint64(n)
}

// TestReadRowsMatchesScan reads, at every version of the fixtures, the
// rows of some whole fragments plus a random subset of the others through
// ReadRows and compares them with the same rows of a full scan: whole
// fragments are scanned, the rest taken, and the order is scan order
// either way. It also checks a scan restricted to those fragments.
func TestReadRowsMatchesScan(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, name := range []string{"history_stable_v21", "history_stable_v22", "history_stable_v20", "history_plain_v22"} {
		tbl, err := lance.Open(ctx, vfs.OS(), filepath.Join(lancedbtest.FixturesDir(t), name+".lance"))
		if err != nil {
			t.Fatal(err)
		}
		refs, _ := tbl.Versions(ctx)
		for _, ref := range refs {
			m, err := tbl.Checkout(ctx, ref.Version)
			if err != nil {
				t.Fatal(err)
			}
			whole := map[uint64]bool{}
			var wantScanned int
			for i, f := range m.Fragments {
				if i%2 == 0 {
					whole[f.ID] = true
					if m.StableRowIDs() && f.LiveRows() == f.PhysicalRows && f.PhysicalRows > 0 {
						wantScanned++
					}
				}
			}
			all := scanJSON(t, tbl, m, lance.ScanOptions{RowMeta: true})
			ids := roaring64.New()
			var want, wantWhole []map[string]any
			for _, r := range all {
				in := whole[rowNum(t, r, lance.ColRowAddr)>>32]
				if in {
					wantWhole = append(wantWhole, r)
				}
				if in || rng.IntN(4) == 0 {
					ids.Add(rowNum(t, r, lance.ColRowID))
					want = append(want, r)
				}
			}
			ids.Add(1 << 45) // not a row
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			rd, err := m.ReadRows(ctx, ids, lance.ScanOptions{RowMeta: true, Mem: mem, BatchSize: 7})
			if err != nil {
				t.Fatalf("%s v%d: %v", name, ref.Version, err)
			}
			var got []map[string]any
			for {
				b, err := rd.Next(ctx)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%s v%d: %v", name, ref.Version, err)
				}
				got = append(got, recordJSON(t, b)...)
				b.Release()
			}
			rd.Close()
			mem.AssertSize(t, 0)
			if len(got) != len(want) {
				t.Fatalf("%s v%d: read %d rows, want %d", name, ref.Version, len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("%s v%d: row %d = %v, want %v", name, ref.Version, i, got[i], want[i])
				}
			}
			if rd.Scanned < wantScanned {
				t.Errorf("%s v%d: %d fragments scanned, want at least %d", name, ref.Version, rd.Scanned, wantScanned)
			}

			// _rowid alone: the same rows, one metadata column.
			rd, err = m.ReadRows(ctx, ids, lance.ScanOptions{RowID: true, Mem: mem, BatchSize: 5})
			if err != nil {
				t.Fatal(err)
			}
			var n int
			for {
				b, err := rd.Next(ctx)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if name := b.Schema().Field(int(b.NumCols()) - 1).Name; name != lance.ColRowID || b.Schema().HasField(lance.ColRowAddr) {
					t.Fatalf("%s v%d: RowID read has columns %v", name, ref.Version, b.Schema())
				}
				for _, r := range recordJSON(t, b) {
					if n >= len(want) || rowNum(t, r, lance.ColRowID) != rowNum(t, want[n], lance.ColRowID) {
						t.Fatalf("%s v%d: RowID read row %d differs", name, ref.Version, n)
					}
					n++
				}
				b.Release()
			}
			if n != len(want) {
				t.Fatalf("%s v%d: RowID read %d rows, want %d", name, ref.Version, n, len(want))
			}
			mem.AssertSize(t, 0)

			frags := make([]uint64, 0, len(whole))
			for id := range whole {
				frags = append(frags, id)
			}
			sub := scanJSON(t, tbl, m, lance.ScanOptions{RowMeta: true, Fragments: frags})
			if len(sub) != len(wantWhole) || (len(sub) > 0 && !reflect.DeepEqual(sub, wantWhole)) {
				t.Fatalf("%s v%d: scan of fragments %v: %d rows, want %d", name, ref.Version, frags, len(sub), len(wantWhole))
			}
		}
	}
}

// TestScanUnknownFragment refuses a fragment id the version does not hold.
func TestScanUnknownFragment(t *testing.T) {
	ctx := context.Background()
	tbl, err := lance.Open(ctx, vfs.OS(), filepath.Join(lancedbtest.FixturesDir(t), "history_stable_v22.lance"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := tbl.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Scan(ctx, lance.ScanOptions{Fragments: []uint64{1 << 40}}); err == nil {
		t.Fatal("scan of a fragment the version does not hold: no error")
	}
}
