package wire

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/control/httpapi"
	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/matview"
)

// Deps opens what `mvd serve` runs on: the database's views (matview),
// NATS (stream; started by the server) and the state store (checkpoint,
// in STATE/state). It is a daemon.DepsFunc; Deps.Close closes what it
// opened.
func Deps(cfg daemon.Config, log *slog.Logger) (daemon.Deps, error) {
	store, err := checkpoint.Open(filepath.Join(cfg.StateDir, "state"), checkpoint.Options{Logger: log.With("component", "checkpoint")})
	if err != nil {
		return daemon.Deps{}, fmt.Errorf("open state store: %w", err)
	}
	// The store keeps each view's source state at its watermark, so a
	// refresh after the source's owner cleaned that version up stays
	// incremental.
	db, err := matview.OpenWith(cfg.DB, matview.Options{Durability: cfg.Durability, SourceStates: store})
	if err != nil {
		_ = store.Close()
		return daemon.Deps{}, fmt.Errorf("open database %s: %w", cfg.DB, err)
	}
	return daemon.Deps{
		Catalog:    Catalog{DB: db, Compact: cfg.CompactPolicy()},
		Changes:    Catalog{DB: db},
		Bus:        NewBus(cfg, log.With("component", "nats")),
		History:    History{Store: store},
		Jobs:       Jobs{Store: store},
		IsConflict: IsConflict,
		API:        httpapi.New(db, httpapi.Options{History: store.History}),
		Logger:     log,
		Close: func() error {
			return errors.Join(db.Close(), store.Close())
		},
	}, nil
}
