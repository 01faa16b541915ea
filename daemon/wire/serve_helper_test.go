package wire

import (
	"context"
	"testing"

	"github.com/mvd-project/mvd/daemon"
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
