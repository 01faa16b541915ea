package wire

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/matview"
)

// TestJobAfterOtherWriter: a job held before its refresh while another
// writer (a second process's matview) refreshes the view to the same
// source step finds nothing to do: no second commit of that step. (A job
// that loses a conflict, exit 3, needs the other commit between the
// job's plan and its commit, which no hold here can place.)
func TestJobAfterOtherWriter(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	manualView(t, cfg.DB, 10)
	var armed atomic.Bool
	held := make(chan struct{}, 1)
	release := make(chan struct{})
	hold := func(ctx context.Context) error {
		if !armed.Load() {
			return nil
		}
		held <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}
	s := startJobServer(t, cfg, hold)
	if j := s.wait(s.submit("v", `{"async":true}`)); j.State != daemon.JobSucceeded {
		t.Fatalf("first job %+v", j)
	}
	writeRows(t, filepath.Join(cfg.DB, "src.lance"), 10, 15)
	armed.Store(true)
	id := s.submit("v", `{"async":true}`)
	<-held
	db, err := matview.Open(cfg.DB)
	if err != nil {
		t.Fatal(err)
	}
	v, err := db.OpenView(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	res, err := v.Refresh(ctx, matview.RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	close(release)
	// The job plans after its hold, on the view as the other writer left
	// it: nothing to do, no second commit of the step.
	if j := s.wait(id); j.State != daemon.JobSucceeded || j.Result == nil || j.Result.Mode != "no_op" ||
		j.Result.Version != res.Version || j.Result.SourceVersion != res.SourceVersion {
		t.Fatalf("job after another writer's refresh of the same step (%+v): %+v, result %+v", res, j, j.Result)
	}
	if version, wm := viewVersion(t, cfg.DB, "v"); version != res.Version || wm != res.SourceVersion {
		t.Fatalf("view at version %d, watermark %d; the other writer left it at %d, %d", version, wm, res.Version, res.SourceVersion)
	}
}
