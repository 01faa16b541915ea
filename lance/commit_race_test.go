package lance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// baseSchema is the fixture tables' schema (testdata/lancedb/lib/data.mjs),
// so LanceDB's operations (updates of val, merge_insert on id) apply.
var baseSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "val", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// baseRecord builds rows for ids: name "g-<id>", val id/4.
func baseRecord(ids []int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, baseSchema)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("g-%d", id))
		b.Field(2).(*array.Float64Builder).Append(float64(id) / 4)
	}
	return b.NewRecordBatch()
}

func idRange(lo, hi int64) []int64 {
	var out []int64
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// testTable is a table mvd writes in a commit test.
type testTable struct {
	t    testing.TB
	root string
	tbl  *lance.Table
}

func createBase(t testing.TB, version lance.FileVersion, ids []int64) *testTable {
	t.Helper()
	schema, err := lance.NewSchemaFromArrow(baseSchema)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "base.lance")
	frags, err := datawriter.WriteFragments(vfs.OS(), root, schema, version, []arrow.RecordBatch{baseRecord(ids)})
	if err != nil {
		t.Fatal(err)
	}
	tbl, _, err := lance.Create(context.Background(), vfs.OS(), root, lance.CreateOptions{Schema: schema, Fragments: frags, DataFileVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	return &testTable{t: t, root: root, tbl: tbl}
}

// write writes ids as new fragments (not committed).
func (tt *testTable) write(ids []int64) []lance.NewFragment {
	tt.t.Helper()
	m := tt.at(0)
	frags, err := datawriter.WriteFragments(vfs.OS(), tt.root, m.Schema, m.DataFileVersion, []arrow.RecordBatch{baseRecord(ids)})
	if err != nil {
		tt.t.Fatal(err)
	}
	return frags
}

// at returns the snapshot of version v (0: the latest).
func (tt *testTable) at(v uint64) *lance.Snapshot {
	tt.t.Helper()
	s, err := tt.tbl.Checkout(context.Background(), v)
	if err != nil {
		tt.t.Fatal(err)
	}
	return s
}

// commit commits c on version read (0: the latest).
func (tt *testTable) commit(read uint64, c *lance.Commit) *lance.Snapshot {
	tt.t.Helper()
	m, err := tt.tbl.Commit(context.Background(), tt.at(read), c)
	if err != nil {
		tt.t.Fatal(err)
	}
	return m
}

// appendIDs writes ids as a new fragment and commits it through its own
// table handle, as an independent writer would.
func appendIDs(root string, ids []int64, meta map[string]string) (*lance.Snapshot, error) {
	tbl, err := lance.Open(context.Background(), vfs.OS(), root)
	if err != nil {
		return nil, err
	}
	m, err := tbl.Checkout(context.Background(), 0)
	if err != nil {
		return nil, err
	}
	frags, err := datawriter.WriteFragments(vfs.OS(), root, m.Schema, m.DataFileVersion, []arrow.RecordBatch{baseRecord(ids)})
	if err != nil {
		return nil, err
	}
	return tbl.Commit(context.Background(), m, &lance.Commit{Fragments: frags, SchemaMetadata: meta})
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
		m, err := tbl.Checkout(context.Background(), v)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := m.Transaction(context.Background())
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
	latest, err := tt.tbl.Checkout(context.Background(), 0)
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
	if err := latest.ScanRowMeta(context.Background(), func(r lance.RowMeta) error {
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
	tt.commit(read, &lance.Commit{DeleteRowIDs: roaring64.BitmapOf(5)})
	_, err := tt.tbl.Commit(context.Background(), tt.at(read), &lance.Commit{DeleteRowIDs: roaring64.BitmapOf(5, 6)})
	var ce *lance.ConflictError
	if !errors.Is(err, lance.ErrConflict) || !errors.As(err, &ce) || ce.Version != 2 || ce.Operation != "delete" {
		t.Fatalf("second delete of row 5: err = %v", err)
	}
	// Different rows rebase over the delete.
	m := tt.commit(read, &lance.Commit{DeleteRowIDs: roaring64.BitmapOf(7)})
	if m.Version != 3 || m.LiveRows() != 98 {
		t.Fatalf("rebased delete: version %d, %d rows", m.Version, m.LiveRows())
	}
	// Watermarks: the second refresher planned on version 3 loses.
	tt.commit(3, &lance.Commit{Fragments: tt.write([]int64{500}), SchemaMetadata: map[string]string{"mv.source_version": "8"}})
	_, err = tt.tbl.Commit(context.Background(), tt.at(3), &lance.Commit{Fragments: tt.write([]int64{501}), SchemaMetadata: map[string]string{"mv.source_version": "9"}})
	if !errors.As(err, &ce) || ce.Version != 4 {
		t.Fatalf("second watermark commit: err = %v", err)
	}
	if latest, _ := tt.tbl.LatestVersion(context.Background()); latest != 4 {
		t.Fatalf("a conflicting commit published version %d", latest)
	}
}

// TestLanceDBRace has LanceDB (a separate process) and mvd commit to one
// table at the same time, many times: LanceDB appends and deletes its own
// rows, mvd appends and deletes-and-appends its own. Every successful
// commit is in history once, and the final table holds exactly the rows
// both sides committed.
// foreignSince reports whether a version in (after, latest] is not one of
// mine: another writer committed since after.
func foreignSince(mine []uint64, after, latest uint64) bool {
	for v := after + 1; v <= latest; v++ {
		if !slices.Contains(mine, v) {
			return true
		}
	}
	return false
}

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
	var lastEvict uint64
	lanceDone := false
	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()
	for i := 0; !lanceDone || i < 12; i++ {
		select {
		case lanceErr = <-done:
			lanceDone = true
		default:
		}
		// After the first 12, take turns: commit again only once LanceDB
		// has committed since mvd's last commit. A tight loop of fast mvd
		// commits would use up LanceDB's 20 bounded commit retries.
		for i >= 12 && !lanceDone {
			latest, err := tt.tbl.LatestVersion(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if foreignSince(mvdVersions, mvdVersions[len(mvdVersions)-1], latest) {
				break
			}
			select {
			case lanceErr = <-done:
				lanceDone = true
			case <-poll.C:
			}
		}
		lo := int64(5000 + 10*i)
		m, err := appendIDs(tt.root, idRange(lo, lo+10), nil)
		for retry := 0; errors.Is(err, lance.ErrConflict) && retry < 3; retry++ {
			// A writer that runs out of rebases retries, as a Lance
			// writer does; the listing helps diagnose why it ran out
			// (seen once in CI-like runs, not reproduced since).
			names, _ := os.ReadDir(filepath.Join(tt.root, "_versions"))
			t.Logf("mvd append %d: %v; retrying (_versions has %d entries)", i, err, len(names))
			m, err = appendIDs(tt.root, idRange(lo, lo+10), nil)
		}
		if err != nil {
			t.Fatalf("mvd append %d: %v", i, err)
		}
		mvdVersions = append(mvdVersions, m.Version)
		wantMvd = append(wantMvd, idRange(lo, lo+10)...)
		// An eviction is an Update, which preempts a LanceDB compaction
		// of the same fragments: evict again only once LanceDB has
		// committed since the last eviction, so the two race without
		// mvd's tight loop starving LanceDB's retries.
		if i%3 == 2 && (lastEvict == 0 || foreignSince(mvdVersions, lastEvict, m.Version)) {
			// Evict this writer's oldest row and add one, in one commit,
			// planned on what mvd itself just wrote.
			victim := wantMvd[0]
			ids, err := rowIDsByScan(tt.tbl, m, victim)
			if err != nil {
				t.Fatal(err)
			}
			m, err := tt.tbl.Commit(context.Background(), m, &lance.Commit{DeleteRowIDs: ids, Fragments: tt.write([]int64{int64(7000 + i)})})
			if err != nil {
				t.Fatalf("mvd delete-and-append %d: %v", i, err)
			}
			mvdVersions = append(mvdVersions, m.Version)
			lastEvict = m.Version
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
	final := wrLanceDBRead(t, tt.root)
	want := append(slices.Clone(wantMvd), wantLance...)
	slices.Sort(want)
	got := wrDataIDs(t, final)
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
	wrSameRowMeta(t, tt.tbl, final)
}

// rowIDsByScan finds the stable row ids of data ids at version m with a
// scan of the id column and the row metadata.
func rowIDsByScan(tbl *lance.Table, m *lance.Snapshot, dataIDs ...int64) (*roaring64.Bitmap, error) {
	want := map[int64]bool{}
	for _, id := range dataIDs {
		want[id] = true
	}
	sc, err := m.Scan(context.Background(), lance.ScanOptions{Columns: []string{"id"}, RowMeta: true})
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	out := roaring64.New()
	for {
		rec, err := sc.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		ids, rowIDs := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Uint64)
		for i := 0; i < ids.Len(); i++ {
			if want[ids.Value(i)] {
				out.Add(rowIDs.Value(i))
			}
		}
		rec.Release()
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
		m   *lance.Snapshot
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
			tbl, err := lance.Open(context.Background(), vfs.OS(), tt.root)
			if err != nil {
				results <- result{w: w, err: err}
				return
			}
			base, err := tbl.Checkout(context.Background(), 1)
			if err != nil {
				results <- result{w: w, err: err}
				return
			}
			m, err := tbl.Commit(context.Background(), base, &lance.Commit{Fragments: frags[w], SchemaMetadata: map[string]string{"mv.source_version": fmt.Sprint(w)}})
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
	latest, err := tt.tbl.Checkout(context.Background(), 0)
	if err != nil || winner < 0 {
		t.Fatalf("no winner (%v)", err)
	}
	if latest.Version != 2 || latest.LiveRows() != 15 || latest.Schema.Metadata["mv.source_version"] != fmt.Sprint(winner) {
		t.Fatalf("after the race: version %d, %d rows, metadata %v", latest.Version, latest.LiveRows(), latest.Schema.Metadata)
	}
}

// TestRebaseNever: a commit that asks never to be rebased fails on any
// concurrent commit, even one it would be compatible with, names the
// winner, and writes nothing; with the default policy the same commit
// rebases.
func TestRebaseNever(t *testing.T) {
	tt := createBase(t, "2.2", idRange(0, 100))
	v1 := tt.at(1)
	winner := tt.commit(1, &lance.Commit{Fragments: tt.write([]int64{200})}) // an append: compatible with anything below
	frags := tt.write([]int64{300})
	refresh := &lance.Commit{
		DeleteRowIDs:   roaring64.BitmapOf(5),
		Fragments:      frags,
		SchemaMetadata: map[string]string{"mv.source_version": "2"},
		Rebase:         lance.RebaseNever,
	}
	_, err := tt.tbl.Commit(context.Background(), v1, refresh)
	var ce *lance.ConflictError
	if !errors.Is(err, lance.ErrConflict) || !errors.As(err, &ce) {
		t.Fatalf("RebaseNever over an append: err = %v, want a *ConflictError", err)
	}
	if ce.Version != winner.Version || ce.ReadVersion != 1 || ce.Operation != "append" {
		t.Fatalf("conflict names version %d (%s) read at %d; want %d (append) read at 1", ce.Version, ce.Operation, ce.ReadVersion, winner.Version)
	}
	if latest := tt.at(0); latest.Version != winner.Version || latest.Schema.Metadata["mv.source_version"] != "" {
		t.Fatalf("the refused commit landed: latest version %d, metadata %v", latest.Version, latest.Schema.Metadata)
	}
	// Planned on the winner, the same commit lands, in one version.
	m, err := tt.tbl.Commit(context.Background(), winner, refresh)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := m.Transaction(context.Background())
	if err != nil || tx.Operation != "update" || m.Schema.Metadata["mv.source_version"] != "2" || m.LiveRows() != 101 {
		t.Fatalf("refresh on the winner: %v, %v, metadata %v, %d rows", tx, err, m.Schema.Metadata, m.LiveRows())
	}
	// The default policy rebases the same kind of commit over an append.
	tt.commit(m.Version, &lance.Commit{Fragments: tt.write([]int64{400})})
	m2, err := tt.tbl.Commit(context.Background(), m, &lance.Commit{DeleteRowIDs: roaring64.BitmapOf(6), Fragments: tt.write([]int64{500})})
	if err != nil || m2.Version != m.Version+2 {
		t.Fatalf("RebaseCompatible over an append: %v", err)
	}
}

// TestRefreshRace has several refresh-like writers (delete, append and
// watermark in one commit, RebaseNever) race on one version, each with
// different watermark keys so the default policy would rebase them all:
// exactly one lands.
func TestRefreshRace(t *testing.T) {
	tt := createBase(t, "2.2", idRange(0, 40))
	const writers = 4
	frags := make([][]lance.NewFragment, writers)
	for w := range frags {
		frags[w] = tt.write([]int64{int64(1000 + w)})
	}
	base := tt.at(1)
	errs := make(chan error, writers)
	var start sync.WaitGroup
	start.Add(1)
	for w := 0; w < writers; w++ {
		go func(w int) {
			start.Wait()
			_, err := tt.tbl.Commit(context.Background(), base, &lance.Commit{
				DeleteRowIDs:   roaring64.BitmapOf(uint64(w)),
				Fragments:      frags[w],
				SchemaMetadata: map[string]string{fmt.Sprintf("mv.w%d", w): "1"},
				Rebase:         lance.RebaseNever,
			})
			errs <- err
		}(w)
	}
	start.Done()
	won := 0
	for i := 0; i < writers; i++ {
		err := <-errs
		var ce *lance.ConflictError
		switch {
		case err == nil:
			won++
		case errors.As(err, &ce) && ce.Version == 2:
		default:
			t.Errorf("writer: %v", err)
		}
	}
	if latest := tt.at(0); won != 1 || latest.Version != 2 || latest.LiveRows() != 40 {
		t.Fatalf("%d winners; latest version %d with %d rows", won, latest.Version, latest.LiveRows())
	}
}

// TestKeyFilterConflicts: commits carrying inserted-rows key filters are
// Update transactions; with the default policy, two whose keys intersect
// (the refresh sentinel guarantees it) conflict as in Lance's resolver,
// while disjoint keys rebase.
func TestKeyFilterConflicts(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "__source_row_id", Type: arrow.PrimitiveTypes.Uint64}}, nil)
	ls, err := lance.NewSchemaFromArrow(schema)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "view.lance")
	write := func(ids ...uint64) []lance.NewFragment {
		b := array.NewUint64Builder(memory.DefaultAllocator)
		defer b.Release()
		b.AppendValues(ids, nil)
		col := b.NewArray()
		defer col.Release()
		rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(len(ids)))
		defer rec.Release()
		frags, err := datawriter.WriteFragments(vfs.OS(), root, ls, "2.2", []arrow.RecordBatch{rec})
		if err != nil {
			t.Fatal(err)
		}
		return frags
	}
	ctx := context.Background()
	tbl, v1, err := lance.Create(ctx, vfs.OS(), root, lance.CreateOptions{Schema: ls, Fragments: write(1, 2, 3)})
	if err != nil {
		t.Fatal(err)
	}
	first, err := tbl.Commit(ctx, v1, &lance.Commit{Fragments: write(10), InsertedRows: lance.RefreshKeyFilter("__source_row_id", roaring64.BitmapOf(10))})
	if err != nil {
		t.Fatal(err)
	}
	if tx, err := first.Transaction(ctx); err != nil || tx.Operation != "update" {
		t.Fatalf("a filtered append committed as %v (%v), want an update", tx, err)
	}
	_, err = tbl.Commit(ctx, v1, &lance.Commit{Fragments: write(20), InsertedRows: lance.RefreshKeyFilter("__source_row_id", roaring64.BitmapOf(20))})
	var ce *lance.ConflictError
	if !errors.As(err, &ce) || ce.Version != first.Version || ce.Operation != "update" {
		t.Fatalf("second refresh over the first: err = %v, want a conflict with version %d", err, first.Version)
	}
	// Without the sentinel, keys far apart land in disjoint filter blocks.
	m, err := tbl.Commit(ctx, v1, &lance.Commit{Fragments: write(30), InsertedRows: &lance.KeyFilter{Column: "__source_row_id", Keys: roaring64.BitmapOf(30)}})
	if err != nil || m.Version != first.Version+1 {
		t.Fatalf("disjoint keys: %v", err)
	}
	if _, err := tbl.Commit(ctx, m, &lance.Commit{Fragments: write(40), InsertedRows: &lance.KeyFilter{Column: "nope", Keys: roaring64.BitmapOf(40)}}); err == nil {
		t.Fatal("a key filter over a missing column committed")
	}
	t.Run("lancedb", func(t *testing.T) {
		lancedbtest.Require(t)
		if v := wrLanceDBRead(t, root); v.Version != m.Version || v.NumRows != 5 {
			t.Fatalf("LanceDB reads version %d with %d rows, want %d with 5", v.Version, v.NumRows, m.Version)
		}
	})
}
