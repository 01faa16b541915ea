package lance_test

import (
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/errorfs"
)

var faultSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

func faultRecord(lo, hi int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, faultSchema)
	defer b.Release()
	for i := lo; i < hi; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.StringBuilder).Append("r" + itoa(int(i)))
	}
	return b.NewRecordBatch()
}

// refreshLike is the commit a view refresh makes: write a data file (its
// sync left to the commit, as matview does), then delete some rows,
// append the new ones and set the watermark, in one version. Every write
// goes through fsys.
func refreshLike(fsys vfs.FS, root string, watermark string) (*lance.Snapshot, error) {
	return refreshLikeSync(fsys, root, watermark, true)
}

// refreshLikeSync is refreshLike with the data file synced by the commit
// (deferred) or by the data writer itself.
func refreshLikeSync(fsys vfs.FS, root string, watermark string, deferred bool) (*lance.Snapshot, error) {
	tbl, err := lance.Open(context.Background(), fsys, root)
	if err != nil {
		return nil, err
	}
	m, err := tbl.Checkout(context.Background(), 0)
	if err != nil {
		return nil, err
	}
	var batch *vfs.SyncBatch
	w := datawriter.NewFragmentWriter(fsys, root, m.Schema, m.DataFileVersion)
	if deferred {
		batch = vfs.NewSyncBatch(fsys)
		w.DeferSync(batch)
	}
	if err := w.Write(faultRecord(1000, 1010)); err != nil {
		batch.Abort()
		return nil, err
	}
	frags, err := w.Finish()
	if err != nil {
		batch.Abort()
		return nil, err
	}
	return tbl.Commit(context.Background(), m, &lance.Commit{
		DeleteRowIDs:   roaring64.BitmapOf(m.NextRowID-1, m.NextRowID-2),
		Fragments:      frags,
		SchemaMetadata: map[string]string{"mv.source_version": watermark},
		Pending:        batch,
	})
}

// pointKey names an injection point by what it does to which kind of
// file, without the random parts of names, so that a run can be told to
// fail "the k-th sync of a data file" whatever order concurrent syncs
// took.
func pointKey(p errorfs.Point) string {
	dir, base := path.Base(path.Dir(p.Path)), path.Base(p.Path)
	kind := base
	switch {
	case strings.HasPrefix(base, ".tmp_latest_version_hint"):
		kind = "hint staging"
	case strings.HasPrefix(base, ".tmp_"):
		kind = dir + " staging"
	case base == "latest_version_hint.json":
		kind = "hint"
	case dir == "data" || dir == "_deletions" || dir == "_transactions" || dir == "_versions":
		kind = dir + " file"
	}
	return p.Op.String() + " " + kind
}

// keyedPoints returns, for each point, its key and its rank among the
// points of the same key (1-based).
func keyedPoints(points []errorfs.Point) (keys []string, ranks []int) {
	seen := map[string]int{}
	for _, p := range points {
		k := pointKey(p)
		seen[k]++
		keys = append(keys, k)
		ranks = append(ranks, seen[k])
	}
	return keys, ranks
}

func failKeyed(key string, rank int) *errorfs.Nth {
	return errorfs.FailNthMatching(rank, errorfs.OpAll, func(p errorfs.Point) bool { return pointKey(p) == key })
}

// checkIntact opens the table and checks that its latest version is whole:
// every file it references exists, its row metadata and transaction read.
func checkIntact(t *testing.T, root string) *lance.Snapshot {
	t.Helper()
	tbl := wrOpenTable(t, root)
	m, err := tbl.Checkout(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Transaction(context.Background()); err != nil {
		t.Fatalf("version %d: transaction: %v", m.Version, err)
	}
	for _, f := range m.Fragments {
		for _, df := range f.Files {
			if _, err := os.Stat(filepath.Join(root, "data", df.Path)); err != nil {
				t.Fatalf("version %d references a missing data file: %v", m.Version, err)
			}
		}
	}
	if err := m.ScanRowMeta(context.Background(), func(lance.RowMeta) error { return nil }); err != nil {
		t.Fatalf("version %d: %v", m.Version, err)
	}
	return m
}

// TestCommitFaults fails each write, sync, link, rename, create and
// directory sync of a refresh-like commit in turn, with the data file's
// sync deferred to the commit's batch and without. After any failure the
// table is at its previous version (or, when only the final directory
// sync failed, at the new version, whole) with nothing partial visible,
// and the next commit succeeds. Points are enumerated by kind and rank
// (pointKey), since a commit's syncs run concurrently.
func TestCommitFaults(t *testing.T) {
	for _, deferred := range []bool{true, false} {
		name := "deferred"
		if !deferred {
			name = "synced-by-writer"
		}
		t.Run(name, func(t *testing.T) { testCommitFaults(t, deferred) })
	}
}

func testCommitFaults(t *testing.T, deferred bool) {
	base := filepath.Join(t.TempDir(), "base.lance")
	schema, err := lance.NewSchemaFromArrow(faultSchema)
	if err != nil {
		t.Fatal(err)
	}
	frags, err := datawriter.WriteFragments(vfs.OS(), base, schema, "2.2", []arrow.RecordBatch{faultRecord(0, 100)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := lance.Create(context.Background(), vfs.OS(), base, lance.CreateOptions{Schema: schema, Fragments: frags}); err != nil {
		t.Fatal(err)
	}
	fresh := func() string {
		dst := filepath.Join(t.TempDir(), "t.lance")
		if err := os.CopyFS(dst, os.DirFS(base)); err != nil {
			t.Fatal(err)
		}
		return dst
	}

	counter := errorfs.NewCounter(errorfs.OpAll)
	if _, err := refreshLikeSync(errorfs.Wrap(vfs.OS(), counter), fresh(), "1", deferred); err != nil {
		t.Fatal(err)
	}
	points := counter.Points()
	keys, ranks := keyedPoints(points)
	if len(points) < 10 {
		t.Fatalf("only %d injection points: %v", len(points), points)
	}
	kinds := map[errorfs.Op]bool{}
	for _, p := range points {
		kinds[p.Op] = true
	}
	for _, op := range []errorfs.Op{errorfs.OpCreate, errorfs.OpWrite, errorfs.OpSync, errorfs.OpLink, errorfs.OpRename, errorfs.OpSyncDir} {
		if !kinds[op] {
			t.Errorf("the commit has no %v to fail", op)
		}
	}
	for n := 1; n <= len(points); n++ {
		root := fresh()
		inj := failKeyed(keys[n-1], ranks[n-1])
		_, err := refreshLikeSync(errorfs.Wrap(vfs.OS(), inj), root, "1", deferred)
		p, hit := inj.Injected()
		if !hit {
			t.Fatalf("point %d (%v) was not reached", n, points[n-1])
		}
		if pointKey(p) != keys[n-1] {
			t.Fatalf("point %d: failed %v, want %s", n, p, keys[n-1])
		}
		m := checkIntact(t, root)
		switch {
		case err == nil:
			// Only best-effort steps may fail without failing the commit.
			if p.Op != errorfs.OpRemove && p.Op != errorfs.OpClose && path.Base(path.Dir(p.Path)) != "_versions" {
				t.Errorf("point %d (%v) failed, yet the commit reported success", n, p)
			}
			if m.Version != 2 {
				t.Errorf("point %d (%v): commit succeeded but the table is at version %d", n, p, m.Version)
			}
		case errors.Is(err, lance.ErrCommitUncertain):
			if p.Op != errorfs.OpSyncDir || m.Version != 2 {
				t.Errorf("point %d (%v): uncertain commit, table at version %d", n, p, m.Version)
			}
		default:
			if !errors.Is(err, errorfs.ErrInjected) {
				t.Errorf("point %d (%v): err = %v, want the injected error", n, p, err)
			}
			if m.Version != 1 {
				t.Errorf("point %d (%v): failed commit left the table at version %d", n, p, m.Version)
			}
		}
		// The next commit succeeds, whatever happened.
		next, err := refreshLike(vfs.OS(), root, "2")
		if err != nil {
			t.Fatalf("point %d (%v): the next commit failed: %v", n, p, err)
		}
		if next.Version != m.Version+1 || next.Schema.Metadata["mv.source_version"] != "2" {
			t.Errorf("point %d: next commit is version %d with %v", n, next.Version, next.Schema.Metadata)
		}
		checkIntact(t, root)
	}

	// LanceDB agrees: a commit whose manifest link failed is invisible,
	// and the retry is read whole.
	if !deferred || !lancedbRequired(t) {
		return
	}
	root := fresh()
	if _, err := refreshLike(errorfs.Wrap(vfs.OS(), failKeyed("link _versions file", 1)), root, "1"); !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("link failure: err = %v", err)
	}
	if v := wrLanceDBRead(t, root); v.Version != 1 || v.NumRows != 100 {
		t.Fatalf("after a failed link LanceDB reads version %d with %d rows", v.Version, v.NumRows)
	}
	if _, err := refreshLike(vfs.OS(), root, "2"); err != nil {
		t.Fatal(err)
	}
	if v := wrLanceDBRead(t, root); v.Version != 2 || v.NumRows != 108 || v.SchemaMetadata["mv.source_version"] != "2" {
		t.Fatalf("after the retry LanceDB reads version %d with %d rows, metadata %v", v.Version, v.NumRows, v.SchemaMetadata)
	}
}

// lancedbRequired reports whether the LanceDB harness is available (and
// fails under CI when it is not), without skipping the calling test.
func lancedbRequired(t *testing.T) bool {
	ok := true
	t.Run("lancedb", func(t *testing.T) {
		lancedbtest.Require(t)
	})
	if t.Failed() {
		ok = false
	}
	avail, _ := lancedbtest.Available()
	return ok && avail
}

// TestCreateFaults fails each durable step of creating a table in turn:
// either no version exists afterwards (and creating again succeeds) or
// version 1 is whole.
func TestCreateFaults(t *testing.T) {
	schema, err := lance.NewSchemaFromArrow(faultSchema)
	if err != nil {
		t.Fatal(err)
	}
	create := func(fsys vfs.FS, root string) error {
		frags, err := datawriter.WriteFragments(fsys, root, schema, "2.2", []arrow.RecordBatch{faultRecord(0, 50)})
		if err != nil {
			return err
		}
		_, _, err = lance.Create(context.Background(), fsys, root, lance.CreateOptions{Schema: schema, Fragments: frags})
		return err
	}
	counter := errorfs.NewCounter(errorfs.OpDurable)
	if err := create(errorfs.Wrap(vfs.OS(), counter), filepath.Join(t.TempDir(), "c.lance")); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= counter.Count(); n++ {
		root := filepath.Join(t.TempDir(), "c.lance")
		err := create(errorfs.Wrap(vfs.OS(), errorfs.FailNth(n, errorfs.OpDurable)), root)
		_, openErr := lance.Open(context.Background(), vfs.OS(), root)
		switch {
		case err == nil || errors.Is(err, lance.ErrCommitUncertain):
			if m := checkIntact(t, root); m.Version != 1 || m.LiveRows() != 50 {
				t.Errorf("point %d: version %d with %d rows", n, m.Version, m.LiveRows())
			}
			continue
		case !errors.Is(err, errorfs.ErrInjected):
			t.Errorf("point %d: err = %v", n, err)
		case !errors.Is(openErr, lance.ErrNotATable):
			t.Errorf("point %d: a failed create left something that opens (%v)", n, openErr)
		}
		if err := create(vfs.OS(), root); err != nil {
			t.Fatalf("point %d: creating again: %v", n, err)
		}
		checkIntact(t, root)
	}
}

// TestCommitOrder checks the durable order of a commit: every file the new
// version references is synced, and its directory synced, before the
// manifest is linked into place; the _versions directory is synced after.
func TestCommitOrder(t *testing.T) {
	base := filepath.Join(t.TempDir(), "o.lance")
	schema, err := lance.NewSchemaFromArrow(faultSchema)
	if err != nil {
		t.Fatal(err)
	}
	frags, err := datawriter.WriteFragments(vfs.OS(), base, schema, "2.2", []arrow.RecordBatch{faultRecord(0, 100)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := lance.Create(context.Background(), vfs.OS(), base, lance.CreateOptions{Schema: schema, Fragments: frags}); err != nil {
		t.Fatal(err)
	}
	c := errorfs.NewCounter(errorfs.OpAll)
	m, err := refreshLike(errorfs.Wrap(vfs.OS(), c), base, "1")
	if err != nil {
		t.Fatal(err)
	}
	pts := c.Points()
	link := -1
	for i, p := range pts {
		if p.Op == errorfs.OpLink {
			link = i
		}
	}
	if link < 0 {
		t.Fatal("no link")
	}
	// A file is durable before the manifest's link if it was synced, or
	// if it was published by PutIfAbsent: a staging name beside it synced,
	// then linked to it.
	synced := map[string]bool{}
	for i, p := range pts[:link] {
		switch p.Op {
		case errorfs.OpSync, errorfs.OpSyncDir:
			synced[p.Path] = true
		case errorfs.OpLink:
			staged := path.Join(path.Dir(p.Path), ".tmp_"+path.Base(p.Path)+"_")
			for _, q := range pts[:i] {
				if q.Op == errorfs.OpSync && strings.HasPrefix(q.Path, staged) {
					synced[p.Path] = true
				}
			}
		}
	}
	_ = wrOpenTable(t, base)
	tx, _ := m.Transaction(context.Background())
	var must []string
	for _, f := range m.Fragments {
		for _, df := range f.Files {
			if f.ID == uint64(m.MaxFragmentID) {
				must = append(must, path.Join(base, "data", df.Path))
			}
		}
		if f.Deletion != nil && f.Deletion.ReadVersion == 1 {
			must = append(must, path.Join(base, "_deletions", itoa(int(f.ID))+"-1-"+utoa(f.Deletion.ID)+".bin"))
		}
	}
	// The transaction is inline only: no _transactions/ file to sync.
	if m.TransactionFile != "" || tx == nil || m.WriterFlags&lance.FlagNoTransactionFiles == 0 {
		t.Errorf("transaction file %q, inline %v, writer flags %v: want the transaction inline only, flag 32 set", m.TransactionFile, tx, lance.FlagNames(m.WriterFlags))
	}
	for _, p := range pts {
		if strings.Contains(p.Path, "/_transactions") {
			t.Errorf("the commit touched %s (%v)", p.Path, p.Op)
		}
	}
	must = append(must, path.Join(base, "data"), path.Join(base, "_deletions"))
	for _, p := range must {
		if !synced[p] {
			t.Errorf("%s was not synced before the manifest link (transaction %v)", p, tx.Operation)
		}
	}
	// The syncs are grouped: every file of the version is written before
	// the first sync (so the syncs can share journal commits), apart from
	// the sync of the table directory that makes a new subdirectory
	// (here _deletions/) durable when it is created.
	lastWrite, firstSync := -1, len(pts)
	for i, p := range pts[:link] {
		switch p.Op {
		case errorfs.OpCreate, errorfs.OpWrite:
			lastWrite = i
		case errorfs.OpSync, errorfs.OpSyncDir:
			if p.Path != base && i < firstSync {
				firstSync = i
			}
		}
	}
	if lastWrite > firstSync {
		t.Errorf("%v is written after %v was synced: the commit's syncs are not grouped", pts[lastWrite], pts[firstSync])
	}
	after := false
	for _, p := range pts[link:] {
		if p.Op == errorfs.OpSyncDir && p.Path == path.Join(base, "_versions") {
			after = true
		}
	}
	if !after {
		t.Error("_versions was not synced after the link")
	}
}
