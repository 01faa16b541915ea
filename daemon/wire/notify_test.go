package wire

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/stream"
	"github.com/mvd-project/mvd/vfs"
)

// viewDB is a database with a source "src" written by mvd's writer and a
// view "v" over it (every row), refreshed once.
type viewDB struct {
	dir, src string
}

func newViewDB(t *testing.T) viewDB {
	t.Helper()
	dir := t.TempDir()
	d := viewDB{dir: dir, src: filepath.Join(dir, "src"+lance.TableSuffix)}
	writeRows(t, d.src, 0, 10)
	db, err := matview.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sel, err := plan.ParseSelect("id")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v, err := db.CreateView(ctx, "v", "src", matview.Definition{Select: sel})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Refresh(ctx, matview.RefreshOptions{}); err != nil {
		t.Fatal(err)
	}
	return d
}

// openView opens the database and its view v with matview; close closes
// the database.
func (d viewDB) openView(t *testing.T) (v *matview.View, close func()) {
	t.Helper()
	db, err := matview.Open(d.dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err = db.OpenView(context.Background(), "v")
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	return v, func() { db.Close() }
}

// refresh refreshes the view with matview, as `mvd view refresh` does.
func (d viewDB) refresh(t *testing.T) *matview.Result {
	t.Helper()
	v, close := d.openView(t)
	defer close()
	res, err := v.Refresh(context.Background(), matview.RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// commitTime is the manifest timestamp of one source version.
func (d viewDB) commitTime(t *testing.T, version uint64) time.Time {
	t.Helper()
	tbl, err := lance.Open(context.Background(), vfs.OS(), d.src)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tbl.Checkout(context.Background(), version)
	if err != nil {
		t.Fatal(err)
	}
	return s.Timestamp
}

// notes subscribes to every notification the refresh stream holds or
// receives from now on.
func notes(t *testing.T, srv *daemon.Server) *stream.Subscription {
	t.Helper()
	info := srv.Info()
	conn, err := stream.Connect(context.Background(), stream.ConnectOptions{URL: info.NATSURL, Token: info.Token, Name: "test subscriber"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	sub, err := conn.SubscribeRefreshesSince(context.Background(), time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Close() })
	return sub
}

// nextNote is the subscription's next notification (within 60 s).
func nextNote(t *testing.T, sub *stream.Subscription) *stream.RefreshNotification {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	n, err := sub.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCatchUpLag (issue 24 item 7): a source commit made while no daemon
// runs is refreshed by the daemon's catch-up at start; its notification
// reports the lag from the commit's manifest timestamp (not 0), and that
// timestamp as source_committed_at.
func TestCatchUpLag(t *testing.T) {
	d := newViewDB(t)
	v2 := writeRows(t, d.src, 10, 20)
	committed := d.commitTime(t, v2)
	srv, _ := startServe(t, "--db", d.dir, "--admin-addr", "127.0.0.1:0")
	n := nextNote(t, notes(t, srv))
	if n.View != "v" || n.SourceVersion != v2 || n.Error != "" {
		t.Fatalf("notification %+v, want the catch-up to source version %d", n, v2)
	}
	if !n.SourceCommittedAt.Equal(committed) {
		t.Errorf("source_committed_at %v, want the manifest's %v", n.SourceCommittedAt, committed)
	}
	want := float64(n.CommittedAt.Sub(committed).Microseconds()) / 1000
	if n.LagMS <= 0 || math.Abs(n.LagMS-want) > 0.01 {
		t.Errorf("lag_ms %v, want committed_at − source commit = %v", n.LagMS, want)
	}
}

// TestRecoverNotifications (issue 24 item 12): a view commit made while
// no daemon runs after the daemon's last notification of the view (as a
// daemon killed between its commit and its publish leaves it) is
// notified when the daemon starts again, once: a further start publishes
// it no more.
func TestRecoverNotifications(t *testing.T) {
	d := newViewDB(t)
	state := filepath.Join(t.TempDir(), "state")
	serve := func() (*daemon.Server, func()) {
		srv, _, stop := startServeStop(t, "--db", d.dir, "--admin-addr", "127.0.0.1:0", "--state-dir", state)
		return srv, stop
	}
	srv, stop := serve()
	sub := notes(t, srv)
	v2 := writeRows(t, d.src, 10, 20)
	first := nextNote(t, sub)
	if first.SourceVersion != v2 || first.Recovered {
		t.Fatalf("first notification %+v, want source version %d", first, v2)
	}
	stop()

	v3 := writeRows(t, d.src, 20, 25)
	missed := d.refresh(t) // committed, never notified
	d.compactAndAlter(t)   // view commits that are not refreshes: nothing to notify
	srv, stop = serve()
	sub = notes(t, srv)
	if n := nextNote(t, sub); n.Version != first.Version {
		t.Fatalf("stream starts with %+v, want the first notification", n)
	}
	n := nextNote(t, sub)
	if !n.Recovered || n.Version != missed.Version || n.SourceVersion != v3 || n.Mode != string(missed.Mode) ||
		n.RowsWritten != missed.RowsWritten || n.Source != "src" || n.Error != "" {
		t.Fatalf("recovered %+v, want version %d at source version %d, %s, %d rows", n, missed.Version, v3, missed.Mode, missed.RowsWritten)
	}
	if !n.SourceCommittedAt.Equal(d.commitTime(t, v3)) || n.LagMS <= 0 {
		t.Errorf("recovered source_committed_at %v (want %v), lag_ms %v", n.SourceCommittedAt, d.commitTime(t, v3), n.LagMS)
	}

	// Neither the compaction nor the alter was recovered: the next
	// notification is the refresh of a new commit.
	v4 := writeRows(t, d.src, 25, 30)
	if n := nextNote(t, sub); n.Recovered || n.SourceVersion != v4 {
		t.Fatalf("after the recovered notification: %+v, want the refresh of source version %d", n, v4)
	}
	stop()

	// Another start: nothing to recover. The next notification in the
	// stream is the refresh of a new commit.
	srv, stop = serve()
	defer stop()
	sub = notes(t, srv)
	nextNote(t, sub)
	nextNote(t, sub)
	nextNote(t, sub)
	v5 := writeRows(t, d.src, 30, 35)
	if n := nextNote(t, sub); n.Recovered || n.SourceVersion != v5 {
		t.Fatalf("after the recovered notification: %+v, want the refresh of source version %d", n, v5)
	}
}

// compactAndAlter commits a compaction step of the view (forced) and a
// change of its metadata, as `mvd view optimize` and `mvd view alter` do.
func (d viewDB) compactAndAlter(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	v, close := d.openView(t)
	defer close()
	before, err := v.Table().LatestVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := v.Compact(ctx, matview.CompactOptions{Force: true}); err != nil || res.Version == 0 {
		t.Fatalf("compact: %+v, %v; want a commit", res, err)
	}
	if _, err := v.SetMetadata(ctx, (matview.Retention{KeepFor: time.Hour, Keep: 7}).Metadata()); err != nil {
		t.Fatal(err)
	}
	if after, err := v.Table().LatestVersion(ctx); err != nil || after != before+2 {
		t.Fatalf("view at version %d (%v), want %d: a compaction and an alter", after, err, before+2)
	}
}

// staleness scrapes mvd_view_staleness_seconds of view v (source src)
// from the server's registry; ok is false when there is no such series.
func staleness(t *testing.T, srv *daemon.Server) (float64, bool) {
	t.Helper()
	series := seriesOf(t, srv, "mvd_view_staleness_seconds", map[string]string{"view": "v", "source": "src"})
	if len(series) == 0 {
		return 0, false
	}
	return series[0].GetGauge().GetValue(), true
}

// TestStaleness (issue 24 item 10): mvd_view_staleness_seconds{view,
// source} is 0 while the view reflects its source's latest version, and
// now − the commit time of the oldest version it does not reflect while
// it is behind (here: a manual view the daemon does not refresh),
// growing until the view catches up.
func TestStaleness(t *testing.T) {
	d := newViewDB(t)
	db, err := matview.Open(d.dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := db.OpenView(context.Background(), "v")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.SetMetadata(context.Background(), map[string]string{"mv.auto_refresh": "manual"}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	srv, _ := startServe(t, "--db", d.dir, "--admin-addr", "127.0.0.1:0")
	waitUntil(t, "staleness of the current view", func() (bool, error) {
		s, ok := staleness(t, srv)
		return ok && s == 0, nil
	})
	v2 := writeRows(t, d.src, 10, 20)
	writeRows(t, d.src, 20, 30) // the oldest version not reflected is v2
	committed := d.commitTime(t, v2)
	before := time.Now()
	s, ok := staleness(t, srv)
	after := time.Now()
	if lo, hi := before.Sub(committed).Seconds(), after.Sub(committed).Seconds(); !ok || s < lo || s > hi {
		t.Fatalf("staleness %v (%v), want between %v and %v", s, ok, lo, hi)
	}
	waitUntil(t, "staleness growing", func() (bool, error) {
		s2, _ := staleness(t, srv)
		return s2 > s, nil
	})
	d.refresh(t)
	if s, ok := staleness(t, srv); !ok || s != 0 {
		t.Fatalf("staleness after the refresh: %v (%v), want 0", s, ok)
	}
}

// TestRecoverRebuildAtSameWatermark: a refresh that rebuilds the view at
// the source version it already reflects (a forced full refresh) stamps
// the same watermark when its clock has not moved on; killed before its
// notification, it is still recovered, and as a rebuild.
func TestRecoverRebuildAtSameWatermark(t *testing.T) {
	d := newViewDB(t)
	state := filepath.Join(t.TempDir(), "state")
	srv, _, stop := startServeStop(t, "--db", d.dir, "--admin-addr", "127.0.0.1:0", "--state-dir", state)
	sub := notes(t, srv)
	v2 := writeRows(t, d.src, 10, 20)
	if n := nextNote(t, sub); n.SourceVersion != v2 {
		t.Fatalf("first notification %+v, want source version %d", n, v2)
	}
	stop()

	ctx := context.Background()
	at := time.Now()
	db, err := matview.OpenWith(d.dir, matview.Options{Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	v, err := db.OpenView(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	v3 := writeRows(t, d.src, 20, 25)
	missed, err := v.Refresh(ctx, matview.RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rebuilt, err := v.Refresh(ctx, matview.RefreshOptions{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if rebuilt.SourceVersion != v3 || rebuilt.Version != missed.Version+1 {
		t.Fatalf("forced refresh %+v after %+v: want a rebuild at source version %d, the next view version", rebuilt, missed, v3)
	}

	srv, _, stop = startServeStop(t, "--db", d.dir, "--admin-addr", "127.0.0.1:0", "--state-dir", state)
	defer stop()
	sub = notes(t, srv)
	nextNote(t, sub) // the first notification, kept by the stream
	for _, want := range []*matview.Result{missed, rebuilt} {
		n := nextNote(t, sub)
		if !n.Recovered || n.Version != want.Version || n.SourceVersion != v3 || n.Mode != string(want.Mode) {
			t.Fatalf("recovered %+v, want version %d at source version %d, %s", n, want.Version, v3, want.Mode)
		}
	}
}
