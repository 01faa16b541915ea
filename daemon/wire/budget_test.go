package wire

import (
	"context"
	"errors"
	"testing"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/matview"
)

// TestRefresherViewBudget: the daemon's refresher applies the view's
// default budget (mv.cpu_millis, …) to a refresh that brings none of its
// own (an auto-refresh), and a refresh's own budget wins over it.
func TestRefresherViewBudget(t *testing.T) {
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
	v, err := db.CreateView(ctx, "v", "src", matview.Definition{})
	if err != nil {
		t.Fatal(err)
	}
	n := func(x int64) *int64 { return &x }
	tiny := matview.Budget{CPUMillis: n(1000), MemoryBytes: n(1024), GPUCount: n(0)}
	if _, err := v.SetMetadata(ctx, tiny.Metadata()); err != nil {
		t.Fatal(err)
	}
	r, err := Catalog{DB: db}.Open(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Refresh(ctx, daemon.RefreshOptions{}); !errors.Is(err, matview.ErrOverBudget) {
		t.Fatalf("auto-refresh under a 1 KiB default budget: %v, want ErrOverBudget", err)
	}
	own := matview.Budget{CPUMillis: n(1000), MemoryBytes: n(1 << 30), GPUCount: n(0)}
	if res, err := r.Refresh(ctx, daemon.RefreshOptions{Budget: own}); err != nil || res.Mode != "rebuild" {
		t.Fatalf("refresh with its own budget: %+v, %v", res, err)
	}
}
