package wire

import (
	"context"
	"testing"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/plan"
)

// serveReady runs the serve process's Server on deps until the test ends,
// and returns it once it has started and is ready. At the end it drains
// it, checks that it stopped without an error and closes deps.
func serveReady(t *testing.T, cfg daemon.Config, deps daemon.Deps) *daemon.Server {
	t.Helper()
	srv := daemon.NewServer(cfg, deps)
	drain, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(drain, context.Background()) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		if err := deps.Close(); err != nil {
			t.Error(err)
		}
	})
	select {
	case <-srv.Started():
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	waitUntil(t, "ready", func() (bool, error) { ok, _ := srv.Ready(); return ok, nil })
	return srv
}

// sourceAndView is the setup of the tests that serve one view: LanceDB
// (started on dir) writes "src", lancedbtest's source with InitialRows
// rows, and view "v" (id, kind, amount of the rows whose kind is not 'a')
// is created on it. It returns the driver and the database, still open:
// the test closes it before serve starts, or keeps it to change views
// while serve runs.
func sourceAndView(t *testing.T, dir string) (*lancedbtest.Driver, *matview.DB) {
	t.Helper()
	d := lancedbtest.StartDriver(t, dir)
	if _, err := d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, lancedbtest.InitialRows, 0)); err != nil {
		t.Fatal(err)
	}
	db, err := matview.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := plan.ParseSelect("id, kind, amount")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateView(context.Background(), "v", "src", matview.Definition{Select: sel, Where: "kind <> 'a'"}); err != nil {
		t.Fatal(err)
	}
	return d, db
}
