package lance_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// TestChangesFromStateAfterCleanup: LanceDB writes a table and deletes a
// row (version W, with a deletion file); mvd keeps W's state, encoded and
// decoded. LanceDB then appends, updates and deletes, and the change set
// from the kept state equals Changes from W's snapshot. LanceDB's
// optimize then compacts and cleans W up (its manifest and deletion file
// are gone): the change set from the kept state to the new head is still
// the one the rows imply, and so it is after an overwrite. A damaged
// encoding fails with ErrCorrupt; a table dropped and recreated under the
// same name fails with ErrStateMismatch.
func TestChangesFromStateAfterCleanup(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	ctx := context.Background()
	d := lancedbtest.StartDriver(t, t.TempDir())
	mustV := func(v uint64, err error) uint64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	mustV(d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 30, 0)))
	W := mustV(d.Delete("src", "id = 0"))
	tbl, err := lance.Open(ctx, vfs.OS(), d.TablePath("src"))
	if err != nil {
		t.Fatal(err)
	}
	at := func(v uint64) *lance.Snapshot {
		t.Helper()
		s, err := tbl.Checkout(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sw := at(W)
	liveW, err := sw.RowIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sw.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := st.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	kept, err := lance.DecodeVersionState(enc)
	if err != nil {
		t.Fatal(err)
	}
	if kept.Version() != W || !kept.Timestamp().Equal(sw.Timestamp) {
		t.Fatalf("kept state is of version %d at %v, want %d at %v", kept.Version(), kept.Timestamp(), W, sw.Timestamp)
	}

	mustV(d.Add("src", lancedbtest.SourceRows(30, 36, 0)))
	if _, err := d.Update("src", "id IN (3, 31)", map[string]string{"score": "score + 1"}); err != nil {
		t.Fatal(err)
	}
	T := mustV(d.Delete("src", "id IN (5, 32)"))
	want, err := lance.Changes(ctx, sw, at(T))
	if err != nil {
		t.Fatal(err)
	}
	sameChanges(t, "before cleanup", fromState(t, kept, at(T)), want)
	// A state made from the one kept before encodes as one made afresh.
	for _, prev := range []*lance.VersionState{nil, st, kept} {
		a, err := at(T).StateSince(ctx, prev)
		if err != nil {
			t.Fatal(err)
		}
		b, err := at(T).State(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ea, eb := encoded(t, a.MarshalBinary), encoded(t, b.MarshalBinary); !bytes.Equal(ea, eb) {
			t.Errorf("state of %d since a kept one: %d bytes, afresh %d", T, len(ea), len(eb))
		}
	}
	if want.Deleted.GetCardinality() != 1 || want.Updated.GetCardinality() != 1 || want.Inserted.GetCardinality() != 5 {
		t.Fatalf("LanceDB's steps changed other rows than planned: %v %v %v", want.Inserted.ToArray(), want.Updated.ToArray(), want.Deleted.ToArray())
	}

	head := mustV(d.OptimizeCleanup("src", 0))
	if _, err := tbl.Checkout(ctx, W); !errors.Is(err, lance.ErrVersionNotFound) {
		t.Fatalf("version %d after cleanup: %v, want ErrVersionNotFound", W, err)
	}
	wdel := sw.Fragments[0].Deletion
	if wdel == nil {
		t.Fatal("version W records no deletion file")
	}
	if _, err := os.Stat(filepath.Join(d.TablePath("src"), "_deletions", fmt.Sprintf("0-%d-%d.arrow", wdel.ReadVersion, wdel.ID))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("version W's deletion file after cleanup: %v, want it gone", err)
	}
	sameChanges(t, "after compaction and cleanup", fromState(t, kept, at(head)), want)

	for i, bad := range map[string][]byte{
		"a flipped byte": flip(enc, len(enc)/2),
		"truncated":      enc[:len(enc)-9],
		"empty":          nil,
	} {
		if _, err := lance.DecodeVersionState(bad); !errors.Is(err, lance.ErrCorrupt) {
			t.Errorf("%s state: %v, want ErrCorrupt", i, err)
		}
	}

	// Overwritten: LanceDB's overwrite gives new fragment and row ids, so
	// the change set deletes every row of W and inserts every new one.
	over := at(mustV(d.Overwrite("src", lancedbtest.SourceRows(0, 10, 3))))
	liveOver, err := over.RowIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameChanges(t, "overwritten", fromState(t, kept, over), &lance.ChangeSet{Inserted: liveOver, Updated: roaring64.New(), Deleted: liveW})

	// Dropped and recreated with the same rows, up to a later version.
	if err := d.DropTable("src"); err != nil {
		t.Fatal(err)
	}
	mustV(d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 30, 7)))
	mustV(d.Delete("src", "id = 0"))
	for i := range 3 {
		mustV(d.Add("src", lancedbtest.SourceRows(int64(30+i), int64(31+i), 7)))
	}
	mustV(d.OptimizeCleanup("src", 0))
	re, err := lance.Open(ctx, vfs.OS(), d.TablePath("src"))
	if err != nil {
		t.Fatal(err)
	}
	latest, err := re.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lance.ChangesFromState(ctx, kept, latest); !errors.Is(err, lance.ErrStateMismatch) {
		t.Errorf("recreated table at version %d: %v, want ErrStateMismatch", latest.Version, err)
	}
}

func fromState(t *testing.T, st *lance.VersionState, to *lance.Snapshot) *lance.ChangeSet {
	t.Helper()
	cs, err := lance.ChangesFromState(context.Background(), st, to)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func sameChanges(t *testing.T, what string, got, want *lance.ChangeSet) {
	t.Helper()
	for _, c := range []struct {
		name      string
		got, want *roaring64.Bitmap
	}{{"inserted", got.Inserted, want.Inserted}, {"updated", got.Updated, want.Updated}, {"deleted", got.Deleted, want.Deleted}} {
		if !c.got.Equals(c.want) {
			t.Errorf("%s: %s %v, want %v", what, c.name, c.got.ToArray(), c.want.ToArray())
		}
	}
}

func encoded(t *testing.T, f func() ([]byte, error)) []byte {
	t.Helper()
	b, err := f()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func flip(b []byte, i int) []byte {
	out := append([]byte(nil), b...)
	out[i] ^= 0x40
	return out
}
