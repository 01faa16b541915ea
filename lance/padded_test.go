package lance_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// paddedTable makes a table of 10 rows at version 1, opens a second
// handle on it at version 1 (the stale writer), then commits two appends
// of 10 rows, each from a staging file prepared ahead (where the
// filesystem has unnamed staging files, the second fills one written
// ahead, padded). It returns the table, the stale handle and its version
// 1, and the last version.
func paddedTable(t *testing.T) (tt *testTable, stale *lance.Table, staleAt, last *lance.Snapshot) {
	t.Helper()
	ctx := context.Background()
	tt = createBase(t, "2.2", idRange(0, 10))
	tbl := tt.tbl
	t.Cleanup(func() {
		if err := tbl.Flush(); err != nil {
			t.Error(err)
		}
	})
	stale, err := lance.Open(ctx, vfs.OS(), tt.root)
	if err != nil {
		t.Fatal(err)
	}
	staleAt = mustLatest(t, stale) // version 1
	for range 2 {
		p := tbl.Prepare()
		s := mustLatest(t, tbl)
		frags, err := datawriterWrite(tt.root, s)
		if err != nil {
			t.Fatal(err)
		}
		last, err = tbl.Commit(ctx, s, &lance.Commit{Fragments: frags, Prepared: p})
		p.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	return tt, stale, staleAt, last
}

// TestPaddedManifest: a prepared commit after another fills the staging
// file written ahead to whole pages, with zeros between the transaction
// and the manifest.
func TestPaddedManifest(t *testing.T) {
	if _, err := vfs.PrepareTempStage(vfs.OS(), t.TempDir()); err != nil {
		t.Skipf("no unnamed staging files here, so none written ahead: %v", err)
	}
	tt, _, _, last := paddedTable(t)
	raw, err := os.ReadFile(filepath.Join(tt.root, "_versions", last.File))
	if err != nil {
		t.Fatal(err)
	}
	// No index section: the transaction is first, the manifest's position
	// is in the tail.
	txnEnd := 4 + int(binary.LittleEndian.Uint32(raw))
	mpos := int(binary.LittleEndian.Uint64(raw[len(raw)-16:]))
	if len(raw)%4096 != 0 || mpos <= txnEnd || !bytes.Equal(raw[txnEnd:mpos], make([]byte, mpos-txnEnd)) {
		t.Fatalf("version %d: %d bytes, transaction ends at %d, manifest at %d: not padded with zeros to whole pages",
			last.Version, len(raw), txnEnd, mpos)
	}
}

// TestPreparedCommitsReadBack: the versions prepared commits publish
// (padded, where the filesystem allows) read back; a stale writer rebases
// over them, which needs their transactions; and LanceDB reads the table.
func TestPreparedCommitsReadBack(t *testing.T) {
	ctx := context.Background()
	tt, stale, staleAt, _ := paddedTable(t)
	fresh, err := lance.Open(ctx, vfs.OS(), tt.root)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustLatest(t, fresh); got.Version != 3 || got.LiveRows() != 20 {
		t.Fatalf("reopened: version %d with %d rows, want 3 with 20", got.Version, got.LiveRows())
	}
	frags, err := datawriterWrite(tt.root, staleAt)
	if err != nil {
		t.Fatal(err)
	}
	rebased, err := stale.Commit(ctx, staleAt, &lance.Commit{Fragments: frags})
	if err != nil {
		t.Fatalf("stale append over the prepared versions: %v", err)
	}
	if rebased.Version != 4 || rebased.LiveRows() != 25 {
		t.Fatalf("rebased: version %d with %d rows, want 4 with 25", rebased.Version, rebased.LiveRows())
	}
	lancedbtest.Require(t)
	wrSameRowMeta(t, fresh, wrLanceDBRead(t, tt.root))
}
