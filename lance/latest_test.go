package lance_test

import (
	"context"
	"github.com/mvd-project/mvd/internal/lancedbtest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// listingFS counts directory listings.
type listingFS struct {
	vfs.FS
	readdirs atomic.Int64
}

func (l *listingFS) ReadDir(dir string) ([]string, error) {
	l.readdirs.Add(1)
	return l.FS.ReadDir(dir)
}

func mustLatest(t *testing.T, tbl *lance.Table) *lance.Snapshot {
	t.Helper()
	s, err := tbl.Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLatestFollowsOtherWriters: a long-lived reader sees every version
// another writer commits, by probing names, without listing _versions/,
// for both manifest naming schemes; far behind, it lists once.
func TestLatestFollowsOtherWriters(t *testing.T) {
	for _, v1 := range []bool{false, true} {
		t.Run("v1="+strconv.FormatBool(v1), func(t *testing.T) {
			tt := createBase(t, "2.2", idRange(0, 10))
			if v1 {
				tt = createBaseV1(t)
			}
			lfs := &listingFS{FS: vfs.OS()}
			reader, err := lance.Open(context.Background(), lfs, tt.root)
			if err != nil {
				t.Fatal(err)
			}
			if got := mustLatest(t, reader).Version; got != 1 {
				t.Fatalf("latest = %d", got)
			}
			if n := lfs.readdirs.Load(); n != 0 {
				t.Errorf("Open and Latest listed _versions/ %d times despite the hint", n)
			}
			start := lfs.readdirs.Load()
			for v := uint64(2); v <= 5; v++ {
				if _, err := appendIDs(tt.root, idRange(int64(v*100), int64(v*100+1)), nil); err != nil {
					t.Fatal(err)
				}
				if got := mustLatest(t, reader).Version; got != v {
					t.Fatalf("latest = %d, want %d", got, v)
				}
				if n, err := reader.LatestVersion(context.Background()); err != nil || n != v {
					t.Fatalf("LatestVersion = %d, %v", n, err)
				}
			}
			if n := lfs.readdirs.Load() - start; n != 0 {
				t.Errorf("%d listings to follow 4 commits", n)
			}
			// Far behind (more than the probe bound): still right.
			for i := range 40 {
				if _, err := appendIDs(tt.root, idRange(int64(1000+i), int64(1001+i)), nil); err != nil {
					t.Fatal(err)
				}
			}
			if got := mustLatest(t, reader).Version; got != 45 {
				t.Fatalf("latest = %d, want 45", got)
			}
			naming, err := reader.Naming(context.Background())
			if want := map[bool]lance.ManifestNaming{false: lance.NamingV2, true: lance.NamingV1}[v1]; err != nil || naming != want {
				t.Errorf("naming = %v, %v; want %v", naming, err, want)
			}
		})
	}
}

// createBaseV1 is createBase with V1 ("N.manifest") names.
func createBaseV1(t *testing.T) *testTable {
	t.Helper()
	schema, err := lance.NewSchemaFromArrow(baseSchema)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "v1.lance")
	tbl, _, err := lance.Create(context.Background(), vfs.OS(), root, lance.CreateOptions{Schema: schema, V1ManifestNames: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "_versions", "1.manifest")); err != nil {
		t.Fatal(err)
	}
	return &testTable{t: t, root: root, tbl: tbl}
}

// TestLatestAfterCleanupAndRecreate: when the remembered version is
// removed (cleanup) or the table is dropped and recreated, with fewer,
// as many or more versions, Latest returns the table on disk now, never a
// cached manifest of the former incarnation.
func TestLatestAfterCleanupAndRecreate(t *testing.T) {
	ctx := context.Background()
	tt := createBase(t, "2.2", idRange(0, 10))
	for i := range 3 {
		if _, err := appendIDs(tt.root, idRange(int64(100+i), int64(101+i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	reader, err := lance.Open(ctx, vfs.OS(), tt.root)
	if err != nil {
		t.Fatal(err)
	}
	if s := mustLatest(t, reader); s.Version != 4 {
		t.Fatalf("latest = %d", s.Version)
	}

	// Cleanup keeps only the newest version, then one more is committed.
	refs, err := reader.Versions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := appendIDs(tt.root, idRange(200, 201), nil); err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		if err := os.Remove(filepath.Join(tt.root, "_versions", r.File)); err != nil {
			t.Fatal(err)
		}
	}
	if s := mustLatest(t, reader); s.Version != 5 || s.LiveRows() != 14 {
		t.Fatalf("after cleanup: version %d with %d rows", s.Version, s.LiveRows())
	}

	recreate := func(versions int, meta string) {
		t.Helper()
		if err := os.RemoveAll(tt.root); err != nil {
			t.Fatal(err)
		}
		nt := createBase(t, "2.2", idRange(0, 3))
		if err := os.Rename(nt.root, tt.root); err != nil {
			t.Fatal(err)
		}
		for i := 1; i < versions; i++ {
			m := map[string]string(nil)
			if i == versions-1 {
				m = map[string]string{"incarnation": meta}
			}
			if _, err := appendIDs(tt.root, idRange(int64(500+i), int64(501+i)), m); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		versions int
		name     string
	}{{3, "fewer"}, {5, "as many"}, {7, "more"}, {7, "mor2"}} {
		mustLatest(t, reader) // remember the current incarnation and cache it
		recreate(c.versions, c.name)
		s := mustLatest(t, reader)
		if s.Version != uint64(c.versions) || s.Schema.Metadata["incarnation"] != c.name || s.LiveRows() != uint64(3+c.versions-1) {
			t.Fatalf("recreated with %s versions: latest is version %d, %q, %d rows", c.name, s.Version, s.Schema.Metadata["incarnation"], s.LiveRows())
		}
		at, err := reader.Checkout(ctx, uint64(c.versions))
		if err != nil || at.Schema.Metadata["incarnation"] != c.name {
			t.Fatalf("checkout %d after recreating: %v %v", c.versions, at, err)
		}
	}
}

// TestLatestPastGap: a reader that last saw a version which a cleanup
// kept (a tagged one) while removing the versions after it finds the
// latest past the gap, through the hint, and a commit planned on it does
// not take a removed version's number.
func TestLatestPastGap(t *testing.T) {
	ctx := context.Background()
	tt, reader := pastGap(t)
	s := mustLatest(t, reader)
	if s.Version != 6 || s.LiveRows() != 15 {
		t.Fatalf("latest past the gap: version %d with %d rows, want 6 with 15", s.Version, s.LiveRows())
	}
	frags, err := datawriterWrite(tt.root, s)
	if err != nil {
		t.Fatal(err)
	}
	m, err := reader.Commit(ctx, s, &lance.Commit{Fragments: frags})
	if err != nil || m.Version != 7 {
		t.Fatalf("commit after the gap: %v, %v; want version 7", m, err)
	}
}

// pastGap makes a table whose versions 3-5 a cleanup removed, keeping 2
// (tagged) and 6 (the latest), and a reader that last saw version 2.
func pastGap(t *testing.T) (*testTable, *lance.Table) {
	t.Helper()
	ctx := context.Background()
	tt := createBase(t, "2.2", idRange(0, 10))
	if _, err := appendIDs(tt.root, idRange(100, 101), nil); err != nil {
		t.Fatal(err)
	}
	reader, err := lance.Open(ctx, vfs.OS(), tt.root)
	if err != nil {
		t.Fatal(err)
	}
	if s := mustLatest(t, reader); s.Version != 2 {
		t.Fatalf("latest = %d", s.Version)
	}
	for i := range 4 {
		if _, err := appendIDs(tt.root, idRange(int64(200+i), int64(201+i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	// Versions 3-5 go; 2 (tagged) and 6 (the latest) stay. The listing is
	// another handle's: the reader must not have seen version 6.
	other, err := lance.Open(ctx, vfs.OS(), tt.root)
	if err != nil {
		t.Fatal(err)
	}
	refs, err := other.Versions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		if r.Version >= 3 && r.Version <= 5 {
			if err := os.Remove(filepath.Join(tt.root, "_versions", r.File)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return tt, reader
}

// TestManifestCache: checking out a version again, or the version just
// committed, reuses the decoded manifest instead of reading it.
func TestManifestCache(t *testing.T) {
	ctx := context.Background()
	tt := createBase(t, "2.2", idRange(0, 10))
	cfs := vfs.NewCountingFS(vfs.OS(), nil)
	tbl, err := lance.Open(ctx, cfs, tt.root)
	if err != nil {
		t.Fatal(err)
	}
	a, err := tbl.Checkout(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	opens := cfs.Opens()
	b, err := tbl.Checkout(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if a.Manifest != b.Manifest || cfs.Opens() != opens {
		t.Errorf("a second checkout of version 1 read %d files", cfs.Opens()-opens)
	}
	frags, err := datawriterWrite(tt.root, a)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tbl.Commit(ctx, a, &lance.Commit{Fragments: frags})
	if err != nil {
		t.Fatal(err)
	}
	opens = cfs.Opens()
	l := mustLatest(t, tbl)
	if l.Manifest != c.Manifest || cfs.Opens() != opens {
		t.Errorf("latest after a commit read %d files (same manifest: %v)", cfs.Opens()-opens, l.Manifest == c.Manifest)
	}
	if st := tbl.ManifestCacheStats(); st.Hits < 2 {
		t.Errorf("cache stats %+v", st)
	}
}

func datawriterWrite(root string, s *lance.Snapshot) ([]lance.NewFragment, error) {
	return datawriter.WriteFragments(vfs.OS(), root, s.Schema, s.DataFileVersion, []arrow.RecordBatch{baseRecord(idRange(900, 905))})
}

// TestOpenWithBadHint: a missing, garbage, too-high or stale hint never
// misleads Open and Latest; they fall back to a listing or probe past it.
func TestOpenWithBadHint(t *testing.T) {
	tt := createBase(t, "2.2", idRange(0, 10))
	for i := range 2 {
		if _, err := appendIDs(tt.root, idRange(int64(100+i), int64(101+i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	hint := filepath.Join(tt.root, "_versions", "latest_version_hint.json")
	for _, body := range []string{"", "{", `{"version":99}`, `{"version":1}`, `{"version":0}`} {
		if err := os.WriteFile(hint, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		tbl, err := lance.Open(context.Background(), vfs.OS(), tt.root)
		if err != nil {
			t.Fatalf("hint %q: %v", body, err)
		}
		if s := mustLatest(t, tbl); s.Version != 3 {
			t.Errorf("hint %q: latest = %d, want 3", body, s.Version)
		}
	}
	if err := os.Remove(hint); err != nil {
		t.Fatal(err)
	}
	tbl, err := lance.Open(context.Background(), vfs.OS(), tt.root)
	if err != nil || mustLatest(t, tbl).Version != 3 {
		t.Fatalf("without a hint: %v", err)
	}
}

func readHint(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "_versions", "latest_version_hint.json"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPreparedCommit: a commit through Table.Prepare publishes like any
// other and leaves no staging file; with DeferHint its hint is written in
// the background (Flush waits for it), never one that goes back past a
// newer version, and readers find the latest version meanwhile.
func TestPreparedCommit(t *testing.T) {
	ctx := context.Background()
	tt := createBase(t, "2.2", idRange(0, 10))
	tbl := tt.tbl
	commit := func(defer_ bool) *lance.Snapshot {
		t.Helper()
		p := tbl.Prepare()
		defer p.Release()
		s := mustLatest(t, tbl)
		frags, err := datawriterWrite(tt.root, s)
		if err != nil {
			t.Fatal(err)
		}
		m, err := tbl.Commit(ctx, s, &lance.Commit{Fragments: frags, Prepared: p, DeferHint: defer_})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	t.Cleanup(func() {
		if err := tbl.Flush(); err != nil {
			t.Error(err)
		}
	}) // before the directory is removed
	m2 := commit(true)
	if m2.Version != 2 {
		t.Fatalf("version %d, want 2", m2.Version)
	}
	if h := readHint(t, tt.root); h != `{"version":1}` && h != `{"version":2}` {
		t.Fatalf("hint %s while its write may be under way: want 1 or 2", h)
	}
	// A reader opening now finds 2, whichever the hint says.
	reader, err := lance.Open(ctx, vfs.OS(), tt.root)
	if err != nil || mustLatest(t, reader).Version != 2 {
		t.Fatalf("reader: %v", err)
	}
	tbl.Flush()
	if h := readHint(t, tt.root); h != `{"version":2}` {
		t.Fatalf("after Flush: %s", h)
	}
	for _, e := range must(os.ReadDir(filepath.Join(tt.root, "_versions"))) {
		if strings.HasPrefix(e.Name(), ".tmp") {
			t.Errorf("staging file %s left behind", e.Name())
		}
	}
	m3 := commit(true)
	tbl.Flush()
	if m3.Version != 3 || readHint(t, tt.root) != `{"version":3}` {
		t.Fatalf("version %d, hint %s: want 3 with hint 3", m3.Version, readHint(t, tt.root))
	}
	// Another writer moves the table on while the hint of 4 may still be
	// pending: once the table has moved on it is not written, so the hint
	// ends at 5, or at 4 if it was written in the moment between the
	// check and 5's commit (one behind, which readers probe past).
	commit(true) // 4, its hint in the background
	if _, err := appendIDs(tt.root, idRange(300, 301), nil); err != nil {
		t.Fatal(err) // 5, written with its own hint
	}
	tbl.Flush()
	if h := readHint(t, tt.root); h != `{"version":5}` && h != `{"version":4}` {
		t.Fatalf("hint %s after versions 4 and 5", h)
	}
	commit(true) // 6
	tbl.Flush()
	if h := readHint(t, tt.root); h != `{"version":6}` {
		t.Fatalf("hint %s, want 6", h)
	}
	// A prepared commit that is never made leaves nothing.
	tbl.Prepare().Release()
	for _, e := range must(os.ReadDir(filepath.Join(tt.root, "_versions"))) {
		if strings.HasPrefix(e.Name(), ".tmp") {
			t.Errorf("released staging file %s left behind", e.Name())
		}
	}
	var none *lance.Prepared
	none.Release()

	// Prepared commits back to back: each takes the unnamed staging file
	// made after the one before. LanceDB reads what they made.
	commit(true)
	commit(true)
	commit(true)
	tbl.Flush()
	t.Run("lancedb", func(t *testing.T) {
		lancedbtest.Require(t)
		wrSameRowMeta(t, tbl, wrLanceDBRead(t, tt.root))
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
