package lance_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// multiFragmentTable creates a table of frags fragments of rows rows each
// (ids 0..), stable row ids on, and returns its first snapshot.
func multiFragmentTable(t *testing.T, frags, rows int) (*lance.Table, *lance.Snapshot) {
	t.Helper()
	schema, err := lance.NewSchemaFromArrow(faultSchema)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "multi.lance")
	var all []lance.NewFragment
	for i := 0; i < frags; i++ {
		lo := int64(i * rows)
		nf, err := datawriter.WriteFragments(vfs.OS(), root, schema, "2.2", []arrow.RecordBatch{faultRecord(lo, lo+int64(rows))})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, nf...)
	}
	tbl, snap, err := lance.Create(context.Background(), vfs.OS(), root, lance.CreateOptions{Schema: schema, Fragments: all})
	if err != nil {
		t.Fatal(err)
	}
	return tbl, snap
}

// TestScanStopsWhenCancelled cancels a scan after its first batch: the next
// call returns context.Canceled (wrapped with the table), not more rows,
// and so does every call after it.
func TestScanStopsWhenCancelled(t *testing.T) {
	_, snap := multiFragmentTable(t, 3, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sc, err := snap.Scan(ctx, lance.ScanOptions{BatchSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	rec, err := sc.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec.Release()
	cancel()
	for i := 0; i < 2; i++ {
		rec, err := sc.Next(ctx)
		if !errors.Is(err, context.Canceled) {
			if rec != nil {
				rec.Release()
			}
			t.Fatalf("Next after cancel = %v, want context.Canceled", err)
		}
		var le *lance.Error
		if !errors.As(err, &le) || le.Version != snap.Version {
			t.Fatalf("cancel error %v does not name the table version", err)
		}
	}
	if _, err := snap.Scan(ctx, lance.ScanOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Scan with a done context = %v", err)
	}
}

// TestTakeStreamsAndStopsWhenCancelled takes rows of every fragment: Take
// yields one batch per fragment and knows the missing ids up front; a
// cancel between fragments stops it before the next fragment is read.
func TestTakeStreamsAndStopsWhenCancelled(t *testing.T) {
	_, snap := multiFragmentTable(t, 3, 1000)
	ids := roaring64.BitmapOf(5, 1005, 1006, 2999, 1<<40)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tk, err := snap.Take(ctx, ids, lance.ScanOptions{RowMeta: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tk.Close()
	if got := tk.Missing().ToArray(); len(got) != 1 || got[0] != 1<<40 {
		t.Fatalf("missing = %v before any batch", got)
	}
	var rows []int64
	for {
		rec, err := tk.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Schema() != tk.Schema() && !rec.Schema().Equal(tk.Schema()) {
			t.Fatalf("batch schema %v, taker schema %v", rec.Schema(), tk.Schema())
		}
		rows = append(rows, rec.NumRows())
		rec.Release()
	}
	if len(rows) != 3 || rows[0] != 1 || rows[1] != 2 || rows[2] != 1 {
		t.Fatalf("batches of %v rows, want one per fragment: [1 2 1]", rows)
	}

	tk2, err := snap.Take(ctx, ids, lance.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tk2.Close()
	rec, err := tk2.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec.Release()
	cancel()
	if rec, err := tk2.Next(ctx); !errors.Is(err, context.Canceled) {
		if rec != nil {
			rec.Release()
		}
		t.Fatalf("Next after cancel = %v, want context.Canceled", err)
	}
}

// TestMetadataReadsStopWhenCancelled: every snapshot call that reads files
// refuses a done context.
func TestMetadataReadsStopWhenCancelled(t *testing.T) {
	tbl, snap := multiFragmentTable(t, 2, 10)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := map[string]func() error{
		"Checkout":      func() error { _, err := tbl.Checkout(ctx, 1); return err },
		"Versions":      func() error { _, err := tbl.Versions(ctx); return err },
		"LatestVersion": func() error { _, err := tbl.LatestVersion(ctx); return err },
		"Open":          func() error { _, err := lance.Open(ctx, vfs.OS(), tbl.Root()); return err },
		"Locate":        func() error { _, _, err := snap.Locate(ctx, roaring64.BitmapOf(1)); return err },
		"Take":          func() error { _, err := snap.Take(ctx, roaring64.BitmapOf(1), lance.ScanOptions{}); return err },
		"ScanRowMeta":   func() error { return snap.ScanRowMeta(ctx, func(lance.RowMeta) error { return nil }) },
		"FragmentRows":  func() error { _, err := snap.FragmentRows(ctx, snap.Fragments[0]); return err },
		"Transaction":   func() error { _, err := snap.Transaction(ctx); return err },
		"Changes":       func() error { _, err := tbl.Changes(ctx, 1, 1); return err },
		"ChangesSince":  func() error { _, err := snap.ChangesSince(ctx, snap); return err },
		"Commit": func() error {
			_, err := tbl.Commit(ctx, snap, &lance.Commit{SchemaMetadata: map[string]string{"k": "v"}})
			return err
		},
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context = %v, want context.Canceled", name, err)
		}
	}
	if v, err := tbl.LatestVersion(context.Background()); err != nil || v != 1 {
		t.Fatalf("a cancelled commit published something: latest %d, %v", v, err)
	}
}

// TestChangesBetweenSnapshots checks Changes over snapshots against the
// version-number form, and that snapshots of two tables are refused.
func TestChangesBetweenSnapshots(t *testing.T) {
	ctx := context.Background()
	tbl, v1 := multiFragmentTable(t, 2, 10)
	v2, err := tbl.Commit(ctx, v1, &lance.Commit{DeleteRowIDs: roaring64.BitmapOf(3, 15)})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := lance.Changes(ctx, v1, v2)
	if err != nil {
		t.Fatal(err)
	}
	byNum, err := tbl.Changes(ctx, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !cs.Deleted.Equals(roaring64.BitmapOf(3, 15)) || !cs.Deleted.Equals(byNum.Deleted) || !cs.Inserted.IsEmpty() || !cs.Updated.IsEmpty() {
		t.Fatalf("changes 1..2: %v (by number %v)", cs.Deleted.ToArray(), byNum.Deleted.ToArray())
	}
	_, other := multiFragmentTable(t, 1, 5)
	if _, err := lance.Changes(ctx, other, v2); err == nil {
		t.Fatal("Changes across two tables succeeded")
	}
	if _, err := tbl.Commit(ctx, other, &lance.Commit{SchemaMetadata: map[string]string{"k": "v"}}); err == nil {
		t.Fatal("a commit on another table's snapshot succeeded")
	}
	if _, err := tbl.Commit(ctx, nil, &lance.Commit{SchemaMetadata: map[string]string{"k": "v"}}); err == nil {
		t.Fatal("a commit with no base succeeded")
	}
}

// TestCorruptDataFile damages one data file of a table in several ways: a
// scan and a take of the table fail with an error for which
// errors.Is(err, lance.ErrCorrupt) holds and that names the file, while the
// fragments before it still read.
func TestCorruptDataFile(t *testing.T) {
	damage := map[string]func(b []byte) []byte{
		"truncated":   func(b []byte) []byte { return b[:len(b)/2] },
		"bad footer":  func(b []byte) []byte { copy(b[len(b)-4:], "XXXX"); return b },
		"bad offsets": func(b []byte) []byte { copy(b[len(b)-40:len(b)-24], bytes.Repeat([]byte{0xff}, 16)); return b },
		"garbage in meta": func(b []byte) []byte {
			return append(b[:len(b)-64], append(bytes.Repeat([]byte{0x5a}, 24), b[len(b)-40:]...)...)
		},
	}
	for name, fn := range damage {
		t.Run(name, func(t *testing.T) {
			tbl, snap := multiFragmentTable(t, 3, 100)
			df := snap.Fragments[1].Files[0]
			p := filepath.Join(tbl.Root(), "data", df.Path)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, fn(b), 0o644); err != nil {
				t.Fatal(err)
			}
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, lance.ErrCorrupt) || !strings.Contains(err.Error(), df.Path) {
					t.Fatalf("%s: err = %v; want ErrCorrupt naming %s", what, err, df.Path)
				}
				if errors.Is(err, lance.ErrUnsupported) {
					t.Fatalf("%s: a corrupt file reported as unsupported: %v", what, err)
				}
			}
			sc, err := snap.Scan(context.Background(), lance.ScanOptions{BatchSize: 1000})
			if err != nil {
				t.Fatal(err)
			}
			defer sc.Close()
			rec, err := sc.Next(context.Background())
			if err != nil {
				t.Fatalf("the first fragment should still read: %v", err)
			}
			rec.Release()
			_, err = sc.Next(context.Background())
			check("scan", err)
			_, _, err = snap.TakeAll(context.Background(), roaring64.BitmapOf(150), lance.ScanOptions{})
			check("take", err)
		})
	}
}
