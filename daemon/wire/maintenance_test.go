package wire

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/matview"
)

// TestServeCompactsViews: under serve, views fed by one-row LanceDB
// commits (appends, updates, deletes) are compacted by their owners as
// their policies say (one from its own metadata, one from the daemon's
// --compact-small-fragments): within a bound of small fragments, holding
// exactly their definition's rows, with LanceDB's refresh of each a
// no_op, and the compactions counted on /metrics.
func TestServeCompactsViews(t *testing.T) {
	lancedbtest.Require(t)
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	ctx := context.Background()
	if _, err := d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 100, 0)); err != nil {
		t.Fatal(err)
	}
	db, err := matview.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	own := matview.CompactPolicy{SmallFragments: 4, DeletedPercent: 10}.Metadata()
	for k, v := range (matview.Retention{KeepFor: 300 * time.Millisecond, Keep: 5}).Metadata() {
		own[k] = v
	}
	if _, err := db.CreateView(ctx, "all", "src", matview.Definition{}, matview.WithMetadata(own)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateView(ctx, "filt", "src", matview.Definition{Where: "amount >= 50"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	srv, _ := startServe(t, "--db", dir, "--admin-addr", "127.0.0.1:0", "--compact-small-fragments", "6")
	db2, err := matview.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	// Each commit is refreshed on its own (one small view fragment each).
	reflects := func(version uint64) {
		t.Helper()
		for _, name := range []string{"all", "filt"} {
			waitUntil(t, fmt.Sprintf("%s at source version %d", name, version), func() (bool, error) {
				wm, err := db2.Watermark(ctx, name)
				return err == nil && wm.SourceVersion >= version, err
			})
		}
	}
	var last uint64
	for i := int64(100); i < 140; i++ {
		switch i % 10 {
		case 3:
			last, err = d.Delete("src", fmt.Sprintf("id = %d", i-50))
		case 7:
			var u lancedbtest.UpdateResult
			u, err = d.Update("src", fmt.Sprintf("id = %d", i-60), map[string]string{"amount": "amount + 1"})
			last = u.Version
		default:
			last, err = d.Add("src", lancedbtest.SourceRows(i, i+1, 0))
		}
		if err != nil {
			t.Fatal(err)
		}
		reflects(last)
	}
	for name, bound := range map[string]int{"all": 4, "filt": 6} {
		v, err := db2.OpenView(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		waitUntil(t, name+" compacted at the last source version", func() (bool, error) {
			m, err := v.Table().Latest(ctx)
			if err != nil {
				return false, err
			}
			wm, err := db2.Watermark(ctx, name)
			small := 0
			for _, f := range m.Fragments {
				if f.PhysicalRows < matview.DefaultCompactSmallRows {
					small++
				}
			}
			return err == nil && wm.SourceVersion == last && small <= bound+1, fmt.Errorf("watermark %d (want %d), %d small fragments", wm.SourceVersion, last, small)
		})
		if m, err := v.Table().Latest(ctx); err == nil {
			t.Logf("%s: version %d, %d fragments", name, m.Version, len(m.Fragments))
		}
		if err := d.CheckView(name, last); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	// The owners may still be compacting: LanceDB sees each view intact
	// at whatever version it is at.
	for _, name := range []string{"all", "filt"} {
		lr, err := d.Refresh(name, lancedbtest.RefreshOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if lr.Mode != "no_op" {
			t.Fatalf("%s: LanceDB refresh after the daemon's compactions: %+v, want no_op", name, lr)
		}
		if n := metric(t, srv, "mvd_view_compactions_total", name); n == 0 {
			t.Errorf("%s: no compaction counted in mvd_view_compactions_total", name)
		}
		// A compaction's commit is the owner's own: it wakes no refresh
		// (each woke a no_op refresh before). The only no_op allowed is
		// the catch-up at the daemon's start.
		if n := refreshesOfMode(t, srv, name, "no_op"); n > 1 {
			t.Errorf("%s: %d no_op refreshes, want at most the catch-up's", name, n)
		}
	}
	// The old versions of the view with a short retention go, while the
	// daemon is idle.
	v, err := db2.OpenView(ctx, "all")
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "old versions of all cleaned up", func() (bool, error) {
		refs, err := v.Table().Versions(ctx)
		return err == nil && len(refs) <= 5, fmt.Errorf("%d versions", len(refs))
	})
	// The owner counts a cleanup once CleanupVersions has returned, after
	// the versions are gone: wait for the count too.
	waitUntil(t, "a version removal counted", func() (bool, error) {
		return metric(t, srv, "mvd_view_cleanup_versions_removed_total", "all") > 0, nil
	})
}

// refreshesOfMode is how many refreshes of view mode the daemon counted
// (mvd_refresh_duration_seconds by mode).
func refreshesOfMode(t *testing.T, srv *daemon.Server, view, mode string) uint64 {
	t.Helper()
	var n uint64
	for _, m := range seriesOf(t, srv, "mvd_refresh_duration_seconds", map[string]string{"view": view, "mode": mode}) {
		n += m.GetHistogram().GetSampleCount()
	}
	return n
}
