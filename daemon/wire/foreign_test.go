package wire

import (
	"context"
	"testing"
	"time"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/matview"
)

// TestHandRefreshToOldVersion: a view refreshed by hand to an old source
// version while serve runs (mvd view refresh --source-version) is brought
// back to the newest at once by the daemon (its policy is on-commit),
// without waiting for the next source commit.
func TestHandRefreshToOldVersion(t *testing.T) {
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	ctx := context.Background()
	old, err := d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, lancedbtest.InitialRows, 0))
	if err != nil {
		t.Fatal(err)
	}
	latest, err := d.Add("src", lancedbtest.SourceRows(lancedbtest.InitialRows, 2*lancedbtest.InitialRows, 0))
	if err != nil {
		t.Fatal(err)
	}
	db, err := matview.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v, err := db.CreateView(ctx, "v", "src", matview.Definition{Where: "amount > 0"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Refresh(ctx, matview.RefreshOptions{}); err != nil {
		t.Fatal(err)
	}
	srv, _ := startServe(t, "--db", dir, "--admin-addr", "127.0.0.1:0")
	watermark := func() uint64 {
		info, err := v.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.Watermark.SourceVersion
	}
	deadline := time.Now().Add(30 * time.Second)
	for ok, _ := srv.Ready(); !ok; ok, _ = srv.Ready() {
		if time.Now().After(deadline) {
			t.Fatal("serve never ready")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// By hand, to the old version: the view is rebuilt to that state.
	if res, err := v.Refresh(ctx, matview.RefreshOptions{SourceVersion: &old}); err != nil || res.SourceVersion != old {
		t.Fatalf("hand refresh to version %d: %+v, %v", old, res, err)
	}
	for watermark() != latest {
		if time.Now().After(deadline) {
			t.Fatalf("the view stayed at source version %d, want the daemon to bring it to %d", watermark(), latest)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
