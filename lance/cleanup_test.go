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
// tagged by LanceDB: the tagged version and the newest three survive with
// their files, LanceDB lists exactly those and checks each out with the
// rows it read before, and the index LanceDB built still answers.
func TestCleanupLanceDB(t *testing.T) {
	lancedbtest.Require(t)
	for _, fixture := range []string{"history_stable_v22", "v1_names_stable"} {
		t.Run(fixture, func(t *testing.T) {
			root := wrCopyFixture(t, fixture)
			tagged := wrLanceDBOps(t, root,
				map[string]any{"op": "add", "start": 5000, "n": 40},
				map[string]any{"op": "delete", "where": "id < 5010"},
				map[string]any{"op": "create_index", "column": "id"},
			)
			last := wrLanceDBOps(t, root,
				map[string]any{"op": "tag", "name": "pinned", "version": tagged},
				map[string]any{"op": "update", "where": "id >= 5030", "values": map[string]string{"name": "'u'"}},
				map[string]any{"op": "add", "start": 6000, "n": 20},
				map[string]any{"op": "optimize"},
				map[string]any{"op": "add", "start": 7000, "n": 5},
				map[string]any{"op": "delete", "where": "id = 7001"},
			)
			keep := []uint64{tagged, last - 2, last - 1, last}
			before := lanceDBReads(t, root, keep)
			// A cleanup that crashes halfway through its deletes leaves
			// every kept version readable by LanceDB.
			inj := errorfs.FailNth(6, errorfs.OpRemove)
			crashed, err := lance.Open(context.Background(), errorfs.Wrap(vfs.OS(), inj), root)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := crashed.CleanupOldVersions(context.Background(), lance.CleanupPolicy{KeepLast: 3}); !errors.Is(err, errorfs.ErrInjected) {
				t.Fatalf("crashed cleanup: %v", err)
			}
			for i, r := range lanceDBReads(t, root, keep) {
				if r.NumRows != before[i].NumRows || string(mustJSON(t, r.Data)) != string(mustJSON(t, before[i].Data)) {
					t.Errorf("after a crashed cleanup LanceDB reads version %d differently", keep[i])
				}
			}
			tbl := wrOpenTable(t, root)
			st, err := tbl.CleanupOldVersions(context.Background(), lance.CleanupPolicy{KeepLast: 3})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(st.Tagged, []uint64{tagged}) || st.VersionsKept != 4 || st.DataFiles == 0 {
				t.Errorf("stats %+v: want the tagged version %d and 3 more kept, data files reclaimed", st, tagged)
			}
			after := lanceDBReads(t, root, keep)
			for i, v := range keep {
				if !slices.Equal(after[i].Versions, keep) {
					t.Fatalf("LanceDB lists versions %v, want %v", after[i].Versions, keep)
				}
				if after[i].NumRows != before[i].NumRows || string(mustJSON(t, after[i].Data)) != string(mustJSON(t, before[i].Data)) {
					t.Errorf("LanceDB reads version %d differently after cleanup (%d rows, was %d)", v, after[i].NumRows, before[i].NumRows)
				}
			}
			if got := versionNumbers(t, tbl); !slices.Equal(got, keep) {
				t.Errorf("mvd lists %v, want %v", got, keep)
			}
			r := wrLanceDBQuery(t, root)
			if !slices.Equal(r, []int64{5020}) {
				t.Errorf("LanceDB's query through the index after cleanup: %v", r)
			}
		})
	}
}

func lanceDBReads(t *testing.T, root string, vs []uint64) []wrLanceDBView {
	t.Helper()
	var list []string
	for _, v := range vs {
		list = append(list, utoa(v))
	}
	out := lancedbtest.RunNode(t, "interop.mjs", "reads", root, strings.Join(list, ","))
	var views []wrLanceDBView
	if err := json.Unmarshal(out, &views); err != nil {
		t.Fatalf("decode interop reads: %v\n%s", err, out)
	}
	return views
}

func wrLanceDBQuery(t *testing.T, root string) []int64 {
	t.Helper()
	b, _ := json.Marshal([]map[string]any{{"op": "indices"}, {"op": "query", "where": "id = 5020"}})
	out := lancedbtest.RunNode(t, "interop.mjs", "ops", root, string(b))
	var r struct {
		Results []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(out, &r); err != nil || len(r.Results) != 2 {
		t.Fatalf("decode interop ops: %v\n%s", err, out)
	}
	if !strings.Contains(string(r.Results[0]), `"id"`) {
		t.Fatalf("LanceDB lists no index on id after cleanup: %s", r.Results[0])
	}
	var ids []int64
	if err := json.Unmarshal(r.Results[1], &ids); err != nil {
		t.Fatal(err)
	}
	return ids
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
