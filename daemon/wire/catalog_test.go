package wire

import (
	"context"
	"testing"
	"time"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/matview"
)

// TestCatalogUnrefreshed: a view created and not refreshed yet is
// described as such, with its creation time (the daemon leaves it to its
// creator for --create-grace); once refreshed it is not, and the
// refresher tells where the view is (version and watermark).
func TestCatalogUnrefreshed(t *testing.T) {
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	ctx := context.Background()
	if _, err := d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 50, 0)); err != nil {
		t.Fatal(err)
	}
	db, err := matview.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	before := time.Now().Add(-time.Second)
	v, err := db.CreateView(ctx, "v", "src", matview.Definition{Where: "amount > 10"})
	if err != nil {
		t.Fatal(err)
	}
	cat := Catalog{DB: db}
	spec, ok, err := cat.View(ctx, "v")
	if err != nil || !ok || !spec.Unrefreshed || spec.CommittedAt.Before(before) || spec.CommittedAt.After(time.Now()) {
		t.Fatalf("new view: %+v, %v, %v; want unrefreshed, created just now", spec, ok, err)
	}
	// One LanceDB's createMaterializedView made is unrefreshed too.
	if _, err := d.CreateView("lv", "src", lancedbtest.ViewSpec{Where: "amount > 10"}); err != nil {
		t.Fatal(err)
	}
	if spec, ok, err := cat.View(ctx, "lv"); err != nil || !ok || !spec.Unrefreshed || spec.CommittedAt.Before(before) {
		t.Fatalf("view LanceDB created: %+v, %v, %v; want unrefreshed, created just now", spec, ok, err)
	}
	res, err := v.Refresh(ctx, matview.RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if spec, _, _ := cat.View(ctx, "v"); spec.Unrefreshed {
		t.Fatalf("refreshed view still described as unrefreshed: %+v", spec)
	}
	r, err := cat.Open(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.(daemon.Watermarker).Watermark(ctx)
	if err != nil || st.Version != res.Version || st.SourceVersion != res.SourceVersion {
		t.Fatalf("view state %+v (%v), want version %d, source version %d", st, err, res.Version, res.SourceVersion)
	}
}
