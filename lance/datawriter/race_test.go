package datawriter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path"
	"slices"
	"sync"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datafile"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// appendIDs writes ids as a new fragment and commits it through its own
// table handle, as an independent writer would.
func appendIDs(root string, ids []int64, meta map[string]string) (*lance.Manifest, error) {
	tbl, err := lance.Open(vfs.OS(), root)
	if err != nil {
		return nil, err
	}
	m, err := tbl.Checkout(0)
	if err != nil {
		return nil, err
	}
	frags, err := datawriter.WriteFragments(vfs.OS(), root, m.Schema, m.DataFileVersion, []arrow.RecordBatch{baseRecord(ids)})
	if err != nil {
		return nil, err
	}
	return tbl.Commit(&lance.Commit{ReadVersion: m.Version, Fragments: frags, SchemaMetadata: meta})
}

// historyOnce checks that every committed version appears once and that
// the transactions of the versions listed carry distinct uuids.
func historyOnce(t *testing.T, tbl *lance.Table, versions []uint64) {
	t.Helper()
	seen := map[uint64]bool{}
	uuids := map[string]uint64{}
	for _, v := range versions {
		if seen[v] {
			t.Fatalf("two successful commits report version %d", v)
		}
		seen[v] = true
		m, err := tbl.Checkout(v)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := tbl.Transaction(m)
		if err != nil || tx == nil {
			t.Fatalf("version %d: transaction %v, %v", v, tx, err)
		}
		if w, dup := uuids[tx.UUID]; dup {
			t.Fatalf("versions %d and %d share transaction %s", w, v, tx.UUID)
		}
		uuids[tx.UUID] = v
	}
}

// TestTwoWritersRace has two mvd writers append concurrently to one table,
// many times. Every commit succeeds by rebasing, is in history exactly
// once, and every row is there once.
func TestTwoWritersRace(t *testing.T) {
	tt := createBase(t, "2.2", idRange(0, 10))
	const perWriter = 15
	var mu sync.Mutex
	var versions []uint64
	var wg sync.WaitGroup
	errs := make(chan error, 2*perWriter)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				lo := int64(1000*(w+1) + 10*i)
				m, err := appendIDs(tt.root, idRange(lo, lo+10), nil)
				if err != nil {
					errs <- err
					continue
				}
				mu.Lock()
				versions = append(versions, m.Version)
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("append: %v", err)
	}
	latest, err := tt.tbl.Checkout(0)
	if err != nil {
		t.Fatal(err)
	}
	if latest.Version != 1+2*perWriter || len(versions) != 2*perWriter {
		t.Fatalf("latest version %d after %d successful commits", latest.Version, len(versions))
	}
	historyOnce(t, tt.tbl, versions)
	if latest.LiveRows() != 10+2*perWriter*10 || latest.NextRowID != latest.LiveRows() {
		t.Fatalf("%d live rows, next row id %d", latest.LiveRows(), latest.NextRowID)
	}
	ids := roaring64.New()
	if err := tt.tbl.ScanRowMeta(latest, func(r lance.RowMeta) error {
		if ids.Contains(r.RowID) {
			return fmt.Errorf("row id %d twice", r.RowID)
		}
		ids.Add(r.RowID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestConflictSentinel checks the commits that cannot be rebased: two
// deletes of one row, and two writers setting one metadata key, planned on
// the same version. The loser gets ErrConflict naming the winner and
// writes nothing; deletes of different rows rebase.
func TestConflictSentinel(t *testing.T) {
	tt := createBase(t, "2.2", idRange(0, 100))
	read := uint64(1)
	tt.commit(&lance.Commit{ReadVersion: read, DeleteRowIDs: roaring64.BitmapOf(5)})
	_, err := tt.tbl.Commit(&lance.Commit{ReadVersion: read, DeleteRowIDs: roaring64.BitmapOf(5, 6)})
	var ce *lance.ConflictError
	if !errors.Is(err, lance.ErrConflict) || !errors.As(err, &ce) || ce.Version != 2 || ce.Operation != "delete" {
		t.Fatalf("second delete of row 5: err = %v", err)
	}
	// Different rows rebase over the delete.
	m := tt.commit(&lance.Commit{ReadVersion: read, DeleteRowIDs: roaring64.BitmapOf(7)})
	if m.Version != 3 || m.LiveRows() != 98 {
		t.Fatalf("rebased delete: version %d, %d rows", m.Version, m.LiveRows())
	}
	// Watermarks: the second refresher planned on version 3 loses.
	tt.commit(&lance.Commit{ReadVersion: 3, Fragments: tt.write([]int64{500}), SchemaMetadata: map[string]string{"mv.source_version": "8"}})
	_, err = tt.tbl.Commit(&lance.Commit{ReadVersion: 3, Fragments: tt.write([]int64{501}), SchemaMetadata: map[string]string{"mv.source_version": "9"}})
	if !errors.As(err, &ce) || ce.Version != 4 {
		t.Fatalf("second watermark commit: err = %v", err)
	}
	if latest, _ := tt.tbl.LatestVersion(); latest != 4 {
		t.Fatalf("a conflicting commit published version %d", latest)
	}
}

// TestLanceDBRace has LanceDB (a separate process) and mvd commit to one
// table at the same time, many times: LanceDB appends and deletes its own
// rows, mvd appends and deletes-and-appends its own. Every successful
// commit is in history once, and the final table holds exactly the rows
// both sides committed.
func TestLanceDBRace(t *testing.T) {
	lancedbtest.Require(t)
	tt := createBase(t, "2.2", idRange(0, 10))
	var ops []map[string]any
	wantLance := []int64{}
	for i := 0; i < 30; i++ {
		lo := 100000 + 100*i
		ops = append(ops, map[string]any{"op": "add", "start": lo, "n": 5})
		wantLance = append(wantLance, idRange(int64(lo), int64(lo+5))...)
	}
	ops = append(ops,
		map[string]any{"op": "delete", "where": "id = 100000"},
		map[string]any{"op": "update", "where": "id >= 100100 AND id < 100200", "values": map[string]string{"val": "val + 1"}},
		map[string]any{"op": "optimize"},
		map[string]any{"op": "merge_insert", "on": "id", "ids": []int{100101, 190000}},
		map[string]any{"op": "add", "start": 200000, "n": 5},
	)
	wantLance = append(wantLance[1:], 190000)
	wantLance = append(wantLance, idRange(200000, 200005)...)
	b, _ := json.Marshal(ops)
	cmd := exec.Command("node", "interop.mjs", "ops", tt.root, string(b))
	cmd.Dir = lancedbtest.HarnessDir(t)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// mvd commits for as long as LanceDB runs (and at least 12 times), so
	// the two really interleave.
	var mvdVersions []uint64
	wantMvd := idRange(0, 10)
	var lanceErr error
	lanceDone := false
	for i := 0; !lanceDone || i < 12; i++ {
		select {
		case lanceErr = <-done:
			lanceDone = true
		default:
		}
		lo := int64(5000 + 10*i)
		m, err := appendIDs(tt.root, idRange(lo, lo+10), nil)
		if err != nil {
			t.Fatalf("mvd append %d: %v", i, err)
		}
		mvdVersions = append(mvdVersions, m.Version)
		wantMvd = append(wantMvd, idRange(lo, lo+10)...)
		if i%3 == 2 {
			// Evict this writer's oldest row and add one, in one commit,
			// planned on what mvd itself just wrote.
			victim := wantMvd[0]
			ids, err := rowIDsByScan(tt.tbl, m, victim)
			if err != nil {
				t.Fatal(err)
			}
			m, err := tt.tbl.Commit(&lance.Commit{ReadVersion: m.Version, DeleteRowIDs: ids, Fragments: tt.write([]int64{int64(7000 + i)})})
			if err != nil {
				t.Fatalf("mvd delete-and-append %d: %v", i, err)
			}
			mvdVersions = append(mvdVersions, m.Version)
			wantMvd = append(wantMvd[1:], int64(7000+i))
		}
	}
	if lanceErr != nil {
		t.Fatalf("LanceDB: %v\n%s", lanceErr, stderr.String())
	}
	interleaved := 0
	for i := 1; i < len(mvdVersions); i++ {
		if mvdVersions[i] > mvdVersions[i-1]+1 {
			interleaved++
		}
	}
	t.Logf("%d mvd commits, %d of them after a LanceDB commit", len(mvdVersions), interleaved)
	if interleaved == 0 {
		t.Error("no LanceDB commit landed between mvd commits: the race was not exercised")
	}
	historyOnce(t, tt.tbl, mvdVersions)
	final := lanceDBRead(t, tt.root)
	want := append(slices.Clone(wantMvd), wantLance...)
	slices.Sort(want)
	got := viewIDs(t, final)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("final table has %d rows, want %d (rows lost or duplicated)", len(got), len(want))
	}
	var lres struct {
		Retries int `json:"retries"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &lres); err != nil {
		t.Fatal(err)
	}
	t.Logf("LanceDB retried %d operations after conflicts with mvd's commits", lres.Retries)
	// LanceDB's optimize commits twice (reserve, rewrite), and a retried
	// optimize may leave an extra reservation behind.
	if min := 1 + uint64(len(mvdVersions)) + uint64(len(ops)) + 1; final.Version < min || final.Version > min+uint64(lres.Retries) {
		t.Errorf("final version %d, want %d mvd and %d LanceDB commits (+%d retries)", final.Version, len(mvdVersions), len(ops)+1, lres.Retries)
	}
	checkRowMeta(t, tt.tbl, final)
}

// rowIDsByScan finds the stable row ids of data ids at version m, with
// mvd's own readers only: the id column through the data file reader, row
// ids through the fragments' row metadata.
func rowIDsByScan(tbl *lance.Table, m *lance.Manifest, dataIDs ...int64) (*roaring64.Bitmap, error) {
	want := map[int64]bool{}
	for _, id := range dataIDs {
		want[id] = true
	}
	out := roaring64.New()
	for _, f := range m.Fragments {
		df := f.Files[0]
		file, err := tbl.FS().Open(path.Join(tbl.Root(), "data", df.Path))
		if err != nil {
			return nil, err
		}
		rd, err := datafile.Open(file, file.Size(), df.Path)
		if err != nil {
			file.Close()
			return nil, err
		}
		col, err := rd.ReadField(context.Background(), 0, arrow.PrimitiveTypes.Int64, 0, f.PhysicalRows, memory.DefaultAllocator)
		file.Close()
		if err != nil {
			return nil, err
		}
		ids := col.(*array.Int64).Int64Values()
		fr, err := tbl.FragmentRows(m, f)
		if err != nil {
			return nil, err
		}
		if err := fr.Each(func(off uint64, r lance.RowMeta) error {
			if want[ids[off]] {
				out.Add(r.RowID)
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if out.GetCardinality() != uint64(len(dataIDs)) {
		return nil, fmt.Errorf("found %d of %d ids at version %d", out.GetCardinality(), len(dataIDs), m.Version)
	}
	return out, nil
}

// TestConcurrentWatermarks has several writers race to commit data plus
// the same watermark key, all planned on one version: exactly one wins,
// every other gets ErrConflict, and none of the losers' rows is visible.
func TestConcurrentWatermarks(t *testing.T) {
	tt := createBase(t, "2.2", idRange(0, 10))
	const writers = 4
	type result struct {
		w   int
		m   *lance.Manifest
		err error
	}
	frags := make([][]lance.NewFragment, writers)
	for w := range frags {
		frags[w] = tt.write(idRange(int64(100*(w+1)), int64(100*(w+1)+5)))
	}
	results := make(chan result, writers)
	var start sync.WaitGroup
	start.Add(1)
	for w := 0; w < writers; w++ {
		go func(w int) {
			start.Wait()
			tbl, err := lance.Open(vfs.OS(), tt.root)
			if err != nil {
				results <- result{w: w, err: err}
				return
			}
			m, err := tbl.Commit(&lance.Commit{ReadVersion: 1, Fragments: frags[w], SchemaMetadata: map[string]string{"mv.source_version": fmt.Sprint(w)}})
			results <- result{w, m, err}
		}(w)
	}
	start.Done()
	winner := -1
	for i := 0; i < writers; i++ {
		r := <-results
		switch {
		case r.err == nil:
			if winner >= 0 {
				t.Fatalf("writers %d and %d both committed", winner, r.w)
			}
			winner = r.w
			if r.m.Version != 2 {
				t.Errorf("winner committed version %d", r.m.Version)
			}
		case errors.Is(r.err, lance.ErrConflict):
		default:
			t.Errorf("writer %d: %v", r.w, r.err)
		}
	}
	latest, err := tt.tbl.Checkout(0)
	if err != nil || winner < 0 {
		t.Fatalf("no winner (%v)", err)
	}
	if latest.Version != 2 || latest.LiveRows() != 15 || latest.Schema.Metadata["mv.source_version"] != fmt.Sprint(winner) {
		t.Fatalf("after the race: version %d, %d rows, metadata %v", latest.Version, latest.LiveRows(), latest.Schema.Metadata)
	}
}
