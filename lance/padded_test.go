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

// TestPaddedManifest: a prepared commit after another fills the staging
// file written ahead to whole pages, with zeros between the transaction
// and the manifest. The table reads back; a stale writer rebases over the
// padded versions, which needs their transactions; and LanceDB reads it.
func TestPaddedManifest(t *testing.T) {
	ctx := context.Background()
	tt := createBase(t, "2.2", idRange(0, 10))
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
	staleAt := mustLatest(t, stale) // version 1
	var last *lance.Snapshot
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
	raw, err := os.ReadFile(filepath.Join(tt.root, "_versions", last.File))
	if err != nil {
		t.Fatal(err)
	}
	// No index section: the transaction is first, the manifest's position
	// is in the tail.
	txnEnd := 4 + int(binary.LittleEndian.Uint32(raw))
	mpos := int(binary.LittleEndian.Uint64(raw[len(raw)-16:]))
	if _, err := vfs.PrepareTempStage(vfs.OS(), t.TempDir()); err != nil {
		t.Skipf("no unnamed staging files here, so none written ahead: %v", err)
	}
	if len(raw)%4096 != 0 || mpos <= txnEnd || !bytes.Equal(raw[txnEnd:mpos], make([]byte, mpos-txnEnd)) {
		t.Fatalf("version %d: %d bytes, transaction ends at %d, manifest at %d: not padded with zeros to whole pages",
			last.Version, len(raw), txnEnd, mpos)
	}
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
		t.Fatalf("stale append over the padded versions: %v", err)
	}
	if rebased.Version != 4 || rebased.LiveRows() != 25 {
		t.Fatalf("rebased: version %d with %d rows, want 4 with 25", rebased.Version, rebased.LiveRows())
	}
	if ok, _ := lancedbtest.Available(); ok {
		wrSameRowMeta(t, fresh, wrLanceDBRead(t, tt.root))
	}
}
