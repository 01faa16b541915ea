package wire

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/matview"
)

// TestDropForgetsViewState: once a served view is dropped, the daemon
// deletes what its store keeps for the view (the source state kept at its
// watermark, its refresh history); the view's jobs stay, they are history.
func TestDropForgetsViewState(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	manualView(t, cfg.DB, 10)
	deps, err := Deps(cfg, quietLog)
	if err != nil {
		t.Fatal(err)
	}
	deps.Bus = nil
	store := deps.History.(History).Store
	srv := serveReady(t, cfg, deps)
	s := &jobServer{t: t, cfg: cfg, srv: srv, base: "http://" + srv.Info().AdminAddr}
	id := s.submit("v", `{"async":true}`)
	if j := s.wait(id); j.State != daemon.JobSucceeded {
		t.Fatalf("job %+v", j)
	}
	waitUntil(t, "the source state kept and the refresh recorded", func() (bool, error) {
		if _, err := store.LoadSourceState(ctx, "v"); err != nil {
			return false, nil
		}
		h, err := store.History(ctx, "v", 10)
		return len(h) > 0, err
	})

	db, err := matview.Open(cfg.DB)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.DropView(ctx, "v"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the dropped view's kept source state deleted", func() (bool, error) {
		_, err := store.LoadSourceState(ctx, "v")
		if errors.Is(err, checkpoint.ErrNotFound) {
			return true, nil
		}
		return false, err
	})
	// The history goes after the state, in bounded transactions of its
	// own (checkpoint.Store.DeleteView): poll for it too.
	waitUntil(t, "the dropped view's refresh history deleted", func() (bool, error) {
		h, err := store.History(ctx, "v", 10)
		return len(h) == 0, err
	})
	var j daemon.Job
	if code := s.do("GET", "/v1/jobs/"+id, "", &j); code != http.StatusOK || j.State != daemon.JobSucceeded {
		t.Errorf("job of the dropped view: %d %+v", code, j)
	}
}
