package wire

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/daemon"
)

// Deps opens what `mvd serve` runs on: NATS (stream; started by the
// server) and the state store (checkpoint, in STATE/state). It is a
// daemon.DepsFunc; Deps.Close closes what it opened. The view layer
// (matview) is wired in when it lands.
func Deps(cfg daemon.Config, log *slog.Logger) (daemon.Deps, error) {
	store, err := checkpoint.Open(filepath.Join(cfg.StateDir, "state"), checkpoint.Options{Logger: log.With("component", "checkpoint")})
	if err != nil {
		return daemon.Deps{}, fmt.Errorf("open state store: %w", err)
	}
	return daemon.Deps{
		Bus:     NewBus(cfg, log.With("component", "nats")),
		History: History{Store: store},
		Logger:  log,
		Close:   store.Close,
	}, nil
}
