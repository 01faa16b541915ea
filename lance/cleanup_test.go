package lance_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/errorfs"
)

// versionDigest is every row (all columns and _rowid) of one version, in
// scan order, printed.
func versionDigest(t *testing.T, tbl *lance.Table, v uint64) string {
	t.Helper()
	m, err := tbl.Checkout(context.Background(), v)
	if err != nil {
		t.Fatalf("checkout %d: %v", v, err)
	}
	sc, err := m.Scan(context.Background(), lance.ScanOptions{RowID: true})
	if err != nil {
		t.Fatalf("scan %d: %v", v, err)
	}
	defer sc.Close()
	var b strings.Builder
	for {
		rec, err := sc.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("scan %d: %v", v, err)
		}
		for _, c := range rec.Columns() {
			b.WriteString(c.String())
		}
		rec.Release()
	}
	return b.String()
}

// tableFiles lists every file under root, relative, sorted.
func tableFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func versionNumbers(t *testing.T, tbl *lance.Table) []uint64 {
	t.Helper()
	refs, err := tbl.Versions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var vs []uint64
	for _, r := range refs {
		vs = append(vs, r.Version)
	}
	return vs
}

// cleanupBase is a table (V1 or V2 manifest names) with seven
// refresh-like versions after its first (each deletes rows and appends a
// fragment: data, deletion and transaction files to reclaim).
func cleanupBase(t *testing.T, naming string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "base.lance")
	schema, err := lance.NewSchemaFromArrow(faultSchema)
	if err != nil {
		t.Fatal(err)
	}
	frags, err := datawriter.WriteFragments(vfs.OS(), root, schema, "2.2", []arrow.RecordBatch{faultRecord(0, 100)})
	if err != nil {
		t.Fatal(err)
	}
	opts := lance.CreateOptions{Schema: schema, Fragments: frags, V1ManifestNames: naming == "v1"}
	if _, _, err := lance.Create(context.Background(), vfs.OS(), root, opts); err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		if err := cleanupCommit(root, i); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// cleanupCommit appends ten rows and deletes the two oldest live rows (so
// the oldest fragment's deletion file is replaced); commit 3 overwrites
// the table instead (so the data files before it are only referenced by
// older versions).
func cleanupCommit(root string, i int) error {
	ctx := context.Background()
	tbl, err := lance.Open(ctx, vfs.OS(), root)
	if err != nil {
		return err
	}
	m, err := tbl.Latest(ctx)
	if err != nil {
		return err
	}
	frags, err := datawriter.WriteFragments(vfs.OS(), root, m.Schema, m.DataFileVersion, []arrow.RecordBatch{faultRecord(int64(1000+10*i), int64(1010+10*i))})
	if err != nil {
		return err
	}
	c := &lance.Commit{Fragments: frags, SchemaMetadata: map[string]string{"mv.source_version": itoa(i)}}
	if i == 3 {
		c.Overwrite, c.Schema = true, m.Schema
	} else {
		ids, err := m.RowIDs(ctx)
		if err != nil {
			return err
		}
		c.DeleteRowIDs = roaring64.New()
		it := ids.Iterator()
		for range 2 {
			c.DeleteRowIDs.Add(it.Next())
		}
	}
	_, err = tbl.Commit(ctx, m, c)
	return err
}

func copyTable(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "t.lance")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestCleanupPolicy keeps the newest KeepLast versions and every one
// committed within KeepFor of Now, and reclaims the files only removed
// versions reference; a second run removes nothing.
func TestCleanupPolicy(t *testing.T) {
	for _, naming := range []string{"v2", "v1"} {
		t.Run(naming, func(t *testing.T) {
			root := cleanupBase(t, naming)
			tbl := wrOpenTable(t, root)
			all := versionNumbers(t, tbl)
			n := len(all)
			// Versions from all[n-3] on are within KeepFor of Now; KeepLast
			// alone would keep 2.
			mid, err := tbl.Checkout(context.Background(), all[n-3])
			if err != nil {
				t.Fatal(err)
			}
			want := map[uint64]string{}
			for _, v := range all[n-3:] {
				want[v] = versionDigest(t, tbl, v)
			}
			before := tableFiles(t, root)
			st, err := tbl.CleanupOldVersions(context.Background(), lance.CleanupPolicy{
				KeepFor: time.Hour, KeepLast: 2, Now: mid.Timestamp.Add(time.Hour),
			})
			if err != nil {
				t.Fatal(err)
			}
			got := versionNumbers(t, wrOpenTable(t, root))
			if !slices.Equal(got, all[n-3:]) {
				t.Fatalf("versions after cleanup %v, want %v", got, all[n-3:])
			}
			if st.VersionsRemoved != n-3 || st.VersionsKept != 3 || st.OldestKept != all[n-3] {
				t.Errorf("stats %v, want %d removed, 3 kept from %d", st, n-3, all[n-3])
			}
			if st.DataFiles == 0 || st.DeletionFiles == 0 || st.BytesRemoved == 0 {
				t.Errorf("stats %v: expected data and deletion files reclaimed", st)
			}
			after := tableFiles(t, root)
			removed := len(before) - len(after)
			if removed != st.VersionsRemoved+st.DataFiles+st.DeletionFiles+st.TransactionFiles+st.IndexFiles {
				t.Errorf("%d files gone, stats say %v", removed, st)
			}
			fresh := wrOpenTable(t, root)
			for v, d := range want {
				if got := versionDigest(t, fresh, v); got != d {
					t.Errorf("version %d reads differently after cleanup", v)
				}
			}
			if latest, _ := tbl.LatestVersion(context.Background()); latest != all[n-1] {
				t.Errorf("latest %d, want %d", latest, all[n-1])
			}
			again, err := fresh.CleanupOldVersions(context.Background(), lance.CleanupPolicy{KeepFor: time.Hour, KeepLast: 2, Now: mid.Timestamp.Add(time.Hour)})
			if err != nil || again.VersionsRemoved != 0 || again.BytesRemoved != 0 {
				t.Errorf("second cleanup: %v, %v; want nothing removed", again, err)
			}
		})
	}
}

// TestCleanupFaults fails each delete and directory sync of a cleanup in
// turn (a crash there): every kept version still reads the same rows, and
// the next cleanup finishes the job, leaving exactly the files an
// uninterrupted cleanup leaves.
func TestCleanupFaults(t *testing.T) {
	for _, naming := range []string{"v2", "v1"} {
		t.Run(naming, func(t *testing.T) {
			base := cleanupBase(t, naming)
			policy := lance.CleanupPolicy{KeepLast: 3}
			all := versionNumbers(t, wrOpenTable(t, base))
			kept := all[len(all)-3:]
			want := map[uint64]string{}
			for _, v := range kept {
				want[v] = versionDigest(t, wrOpenTable(t, base), v)
			}
			clean := copyTable(t, base)
			if _, err := wrOpenTable(t, clean).CleanupOldVersions(context.Background(), policy); err != nil {
				t.Fatal(err)
			}
			wantFiles := tableFiles(t, clean)

			ops := errorfs.OpRemove | errorfs.OpSyncDir
			counter := errorfs.NewCounter(ops)
			tbl, err := lance.Open(context.Background(), errorfs.Wrap(vfs.OS(), counter), copyTable(t, base))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tbl.CleanupOldVersions(context.Background(), policy); err != nil {
				t.Fatal(err)
			}
			points := counter.Points()
			kinds := map[errorfs.Op]bool{}
			for _, p := range points {
				kinds[p.Op] = true
			}
			if !kinds[errorfs.OpRemove] || !kinds[errorfs.OpSyncDir] || len(points) < 10 {
				t.Fatalf("cleanup has only %d points: %v", len(points), points)
			}
			for n := 1; n <= len(points); n++ {
				root := copyTable(t, base)
				inj := errorfs.FailNth(n, ops)
				tbl, err := lance.Open(context.Background(), errorfs.Wrap(vfs.OS(), inj), root)
				if err != nil {
					t.Fatal(err)
				}
				_, err = tbl.CleanupOldVersions(context.Background(), policy)
				p, hit := inj.Injected()
				if !hit || !errors.Is(err, errorfs.ErrInjected) {
					t.Fatalf("point %d (%v): hit %v, err %v", n, points[n-1], hit, err)
				}
				crashed := wrOpenTable(t, root)
				for v, d := range want {
					if got := versionDigest(t, crashed, v); got != d {
						t.Fatalf("point %d (%v): kept version %d reads differently", n, p, v)
					}
				}
				if _, err := crashed.CleanupOldVersions(context.Background(), policy); err != nil {
					t.Fatalf("point %d (%v): next cleanup: %v", n, p, err)
				}
				if got := tableFiles(t, root); !slices.Equal(got, wantFiles) {
					t.Fatalf("point %d (%v): after the next cleanup\n%v\nwant\n%v", n, p, got, wantFiles)
				}
			}
		})
	}
}

// TestCleanupLanceDB runs a cleanup over a history LanceDB wrote (appends,
// deletes, an update, a scalar index, a compaction) with one old version
// tagged by LanceDB, after a cleanup that crashed halfway through its
// deletes: LanceDB reads every kept version as before at both points, the
// tagged version and the newest three survive with their files, LanceDB
// lists exactly those, and the index LanceDB built still answers. One
// LanceDB process drives it all (a node start costs seconds).
func TestCleanupLanceDB(t *testing.T) {
	lancedbtest.Require(t)
	dir := t.TempDir()
	fixtures := []string{"history_stable_v22", "v1_names_stable"}
	for _, f := range fixtures {
		src := filepath.Join(lancedbtest.FixturesDir(t), f+".lance")
		if err := os.CopyFS(filepath.Join(dir, f+".lance"), os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
	}
	d := lancedbtest.StartDriver(t, dir)
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) { testCleanupLanceDB(t, d, name, filepath.Join(dir, name+".lance")) })
	}
}

func testCleanupLanceDB(t *testing.T, d *lancedbtest.Driver, name, root string) {
	rows := func(lo, n int64) []lancedbtest.Record {
		var out []lancedbtest.Record
		for id := lo; id < lo+n; id++ {
			out = append(out, lancedbtest.Record{"id": id, "name": "n" + itoa(int(id)), "val": float64(id) / 4})
		}
		return out
	}
	must := func(v uint64, err error) uint64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	must(d.Add(name, rows(5000, 40)))
	must(d.Delete(name, "id < 5010"))
	tagged := must(d.CreateIndex(name, "id", "btree"))
	if err := d.CreateTag(name, "pinned", tagged); err != nil {
		t.Fatal(err)
	}
	u, err := d.Update(name, "id >= 5030", map[string]string{"name": "'u'"})
	must(u.Version, err)
	must(d.Add(name, rows(6000, 20)))
	must(d.Optimize(name))
	must(d.Add(name, rows(7000, 5)))
	last := must(d.Delete(name, "id = 7001"))
	keep := []uint64{tagged, last - 2, last - 1, last}
	read := func() []string {
		t.Helper()
		var out []string
		for _, v := range keep {
			sc, err := d.Read(name, lancedbtest.ReadOptions{Version: v, RowID: true})
			if err != nil {
				t.Fatalf("LanceDB checks out version %d: %v", v, err)
			}
			out = append(out, string(mustJSON(t, sc.Rows)))
		}
		return out
	}
	before := read()
	inj := errorfs.FailNth(6, errorfs.OpRemove)
	crashed, err := lance.Open(context.Background(), errorfs.Wrap(vfs.OS(), inj), root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := crashed.CleanupOldVersions(context.Background(), lance.CleanupPolicy{KeepLast: 3}); !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("crashed cleanup: %v", err)
	}
	if !slices.Equal(read(), before) {
		t.Fatal("after a crashed cleanup LanceDB reads the kept versions differently")
	}
	tbl := wrOpenTable(t, root)
	st, err := tbl.CleanupOldVersions(context.Background(), lance.CleanupPolicy{KeepLast: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st.Tagged, []uint64{tagged}) || st.VersionsKept != 4 || st.VersionsRemoved == 0 {
		t.Errorf("stats %+v: want the tagged version %d and 3 more kept", st, tagged)
	}
	if lv, err := d.Versions(name); err != nil || !slices.Equal(lv, keep) {
		t.Fatalf("LanceDB lists versions %v (%v), want %v", lv, err, keep)
	}
	if got := versionNumbers(t, tbl); !slices.Equal(got, keep) {
		t.Errorf("mvd lists %v, want %v", got, keep)
	}
	if !slices.Equal(read(), before) {
		t.Fatal("after the cleanup LanceDB reads the kept versions differently")
	}
	ix, err := d.ListIndices(name)
	if err != nil || len(ix) == 0 {
		t.Fatalf("LanceDB lists indices %v (%v) after cleanup", ix, err)
	}
	sc, err := d.Read(name, lancedbtest.ReadOptions{Where: "id = 5020", Columns: []string{"id"}})
	if err != nil || len(sc.Rows) != 1 {
		t.Fatalf("LanceDB's query through the index after cleanup: %v, %v", sc, err)
	}
	for _, dir := range []string{"data", "_indices"} {
		if entries, err := os.ReadDir(filepath.Join(root, dir)); err != nil || len(entries) == 0 {
			t.Fatalf("%s after cleanup: %v, %v", dir, entries, err)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCleanupDecodesOnlyNewManifests: a table handle that cleaned up
// before reads only the manifests committed since when it cleans up
// again (a daemon cleans up a view with an hour of versions every few
// seconds).
func TestCleanupDecodesOnlyNewManifests(t *testing.T) {
	root := cleanupBase(t, "v2")
	var opened []string
	cfs := vfs.NewCountingFS(vfs.OS(), func(name string) { opened = append(opened, filepath.Base(filepath.Dir(name))) })
	tbl, err := lance.Open(context.Background(), cfs, root)
	if err != nil {
		t.Fatal(err)
	}
	policy := lance.CleanupPolicy{KeepFor: time.Hour, KeepLast: 1}
	if _, err := tbl.CleanupOldVersions(context.Background(), policy); err != nil {
		t.Fatal(err)
	}
	if err := cleanupCommit(root, 9); err != nil {
		t.Fatal(err)
	}
	opened = nil
	if _, err := tbl.CleanupOldVersions(context.Background(), policy); err != nil {
		t.Fatal(err)
	}
	manifests := 0
	for _, dir := range opened {
		if dir == "_versions" {
			manifests++
		}
	}
	if manifests != 1 {
		t.Fatalf("the second cleanup opened %d manifests (%v), want only the new one", manifests, opened)
	}
}
