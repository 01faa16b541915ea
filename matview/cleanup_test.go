package matview

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// dirListing is every file under root with its size, sorted.
func dirListing(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, rel+" "+strconv.FormatInt(info.Size(), 10))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func viewVersions(t *testing.T, v *View) []uint64 {
	t.Helper()
	refs, err := v.Table().Versions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	for _, r := range refs {
		out = append(out, r.Version)
	}
	return out
}

func span(from, to uint64) []uint64 {
	var out []uint64
	for v := from; v <= to; v++ {
		out = append(out, v)
	}
	return out
}

// TestCleanupVersionsLanceDB cleans up a view with a view defined over it
// that lags: the versions its refresh walks survive (its next refresh is
// incremental), the source is not touched (every file byte for byte), and
// LanceDB lists exactly the kept versions, checks each out with the rows
// mvd reads, and its own refresh of the view is a no_op.
func TestCleanupVersionsLanceDB(t *testing.T) {
	lancedbtest.Require(t)
	ctx := context.Background()
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	must[uint64](t)(d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 40, 0)))
	db := openDB(t, dir)
	v := must[*View](t)(db.CreateView(ctx, "v", "src", Definition{Where: "amount > 10"}))
	w := must[*View](t)(db.CreateView(ctx, "w", "v", Definition{}))
	var lag uint64
	for i := range int64(10) {
		must[uint64](t)(d.Add("src", lancedbtest.SourceRows(40+5*i, 45+5*i, 0)))
		must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
		if i == 4 {
			lag = must[*Result](t)(w.Refresh(ctx, RefreshOptions{})).SourceVersion
		}
	}
	srcBefore := dirListing(t, filepath.Join(dir, "src.lance"))
	latest := mustLatest(t, v).Version
	res := must[CleanupResult](t)(v.CleanupVersions(ctx, CleanupOptions{Retention: &Retention{Keep: 2}}))
	if res.KeptFrom != lag || !slices.Equal(viewVersions(t, v), span(lag, latest)) || res.VersionsRemoved != int(lag-1) {
		t.Fatalf("cleanup %+v left versions %v; want %d..%d (w's watermark on)", res, viewVersions(t, v), lag, latest)
	}
	if res.BytesRemoved == 0 {
		t.Errorf("cleanup reclaimed no bytes: %+v", res)
	}
	if got := dirListing(t, filepath.Join(dir, "src.lance")); !slices.Equal(got, srcBefore) {
		t.Fatalf("the source changed under a view's cleanup:\n%v\nwas\n%v", got, srcBefore)
	}
	checkView(t, db, "v")
	if r := must[*Result](t)(w.Refresh(ctx, RefreshOptions{})); r.Mode != ModeIncremental {
		t.Fatalf("w's refresh after v's cleanup: %+v, want incremental", r)
	}
	checkView(t, db, "w")
	// Nothing lags now: the retention alone decides.
	must[CleanupResult](t)(v.CleanupVersions(ctx, CleanupOptions{Retention: &Retention{Keep: 2}}))
	kept := viewVersions(t, v)
	if !slices.Equal(kept, span(latest-1, latest)) {
		t.Fatalf("versions %v after the second cleanup, want the last 2", kept)
	}
	lv := must[[]uint64](t)(d.Versions("v"))
	if !slices.Equal(lv, kept) {
		t.Fatalf("LanceDB lists %v, want %v", lv, kept)
	}
	for _, ver := range kept {
		m, err := v.Table().Checkout(ctx, ver)
		if err != nil {
			t.Fatal(err)
		}
		if n := must[uint64](t)(d.Count("v", ver)); n != m.LiveRows() {
			t.Errorf("LanceDB counts %d rows at version %d, mvd %d", n, ver, m.LiveRows())
		}
	}
	if r := must[lancedbtest.RefreshResult](t)(d.Refresh("v", lancedbtest.RefreshOptions{})); r.Mode != "no_op" {
		t.Errorf("LanceDB's refresh after the cleanup: %+v, want no_op", r)
	}
}

// TestCleanupConcurrentRefresh cleans up a view over and over, through
// another handle (another process would do the same), while it is
// refreshed: no refresh fails or loses a row.
func TestCleanupConcurrentRefresh(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := newGoSource(t, vfs.OS(), dir, "src", 100)
	db := openDB(t, dir)
	v := must[*View](t)(db.CreateView(ctx, "v", "src", Definition{Where: "amount > 20"}))
	must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	other := must[*View](t)(openDB(t, dir).OpenView(ctx, "v"))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var cleanups int
	var cleanupErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := other.CleanupVersions(ctx, CleanupOptions{Retention: &Retention{Keep: 1}}); err != nil {
				cleanupErr = err
				return
			}
			cleanups++
		}
	}()
	for i := range int64(25) {
		src.append(t, 100+4*i, 104+4*i)
		if i%5 == 4 {
			src.deleteWhere(t, func(id int64) bool { return id%11 != int64(i%11) })
		}
		if _, err := v.Refresh(ctx, RefreshOptions{}); err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("refresh %d during cleanups: %v", i, err)
		}
	}
	close(stop)
	wg.Wait()
	if cleanupErr != nil {
		t.Fatalf("cleanup during refreshes: %v", cleanupErr)
	}
	if cleanups == 0 {
		t.Fatal("no cleanup ran during the refreshes")
	}
	checkView(t, db, "v")
	must[CleanupResult](t)(v.CleanupVersions(ctx, CleanupOptions{Retention: &Retention{Keep: 1}}))
	if vs := viewVersions(t, v); len(vs) != 1 {
		t.Errorf("versions %v after a final cleanup keeping 1", vs)
	}
	checkView(t, db, "v")
}

// TestRetentionMetadata: a view's retention comes from its metadata
// (default an hour and 10 versions), bad values are refused, and
// CleanupVersions and CleanupDue apply it.
func TestRetentionMetadata(t *testing.T) {
	if r, err := RetentionFromMetadata(nil); err != nil || r != DefaultRetention {
		t.Fatalf("default retention %v, %v", r, err)
	}
	for _, md := range []map[string]string{
		{KeyKeepVersions: "0"}, {KeyKeepVersions: "x"}, {KeyKeepVersions: "-3"},
		{KeyKeepVersionsForMS: "-1"}, {KeyKeepVersionsForMS: "soon"}, {KeyKeepVersionsForMS: "1e30"},
	} {
		if _, err := RetentionFromMetadata(md); err == nil {
			t.Errorf("%v accepted", md)
		}
	}
	r := Retention{KeepFor: 1500 * time.Millisecond, Keep: 3}
	if got, err := RetentionFromMetadata(r.Metadata()); err != nil || got != r {
		t.Fatalf("round trip %v: %v, %v", r, got, err)
	}

	ctx := context.Background()
	dir := t.TempDir()
	src := newGoSource(t, vfs.OS(), dir, "src", 10)
	db := openDB(t, dir)
	v := must[*View](t)(db.CreateView(ctx, "v", "src", Definition{}))
	for i := range int64(6) {
		src.append(t, 10+i, 11+i)
		must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	}
	must[uint64](t)(v.SetMetadata(ctx, Retention{KeepFor: time.Hour, Keep: 3}.Metadata()))
	n := len(viewVersions(t, v))
	now := mustLatest(t, v).Timestamp
	if due := must[bool](t)(v.CleanupDue(ctx, now)); due {
		t.Fatal("cleanup due while every version is within the hour kept")
	}
	first := must[*lance.Snapshot](t)(v.Table().Checkout(ctx, viewVersions(t, v)[0]))
	if next := must[time.Time](t)(v.NextCleanup(ctx, now)); !next.Equal(first.Timestamp.Add(time.Hour)) {
		t.Fatalf("next cleanup at %v, want an hour after the oldest version (%v)", next, first.Timestamp)
	}
	later := now.Add(2 * time.Hour)
	if due := must[bool](t)(v.CleanupDue(ctx, later)); !due {
		t.Fatal("cleanup not due two hours later")
	}
	res := must[CleanupResult](t)(v.CleanupVersions(ctx, CleanupOptions{Now: later}))
	if res.Retention.Keep != 3 || res.VersionsKept != 3 || res.VersionsRemoved != n-3 {
		t.Fatalf("cleanup by the view's metadata: %+v (had %d versions)", res, n)
	}
	if due := must[bool](t)(v.CleanupDue(ctx, later)); due {
		t.Fatal("cleanup still due after it ran")
	}
	if next := must[time.Time](t)(v.NextCleanup(ctx, later)); !next.IsZero() {
		t.Fatalf("next cleanup at %v with only the 3 kept versions left", next)
	}
	if _, err := v.CleanupVersions(ctx, CleanupOptions{Retention: &Retention{Keep: 0}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("keep 0: %v", err)
	}
	if _, err := v.SetMetadata(ctx, map[string]string{KeyKeepVersions: "none"}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.CleanupVersions(ctx, CleanupOptions{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad stored retention: %v", err)
	}
}
