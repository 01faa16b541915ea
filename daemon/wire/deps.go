package wire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/control/httpapi"
	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/s3fs"
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
	db, err := matview.OpenWith(cfg.DB, matview.Options{Durability: cfg.Durability, SourceStates: store, StorageOptions: cfg.StorageOptions.Map()})
	if err != nil {
		_ = store.Close()
		return daemon.Deps{}, fmt.Errorf("open database %s: %w", cfg.DB, err)
	}
	fsys, dir, err := watchStore(cfg)
	if err != nil {
		_ = errors.Join(db.Close(), store.Close())
		return daemon.Deps{}, err
	}
	// With --nats-url the jobs' history is shared by every instance (a
	// key-value bucket); with the embedded server it is in the store.
	var jobs daemon.JobStore = Jobs{Store: store}
	closeJobs := func() error { return nil }
	if cfg.NATSURL != "" {
		o := externalOptions(cfg)
		o.Name, o.Logger = "mvd serve jobs", log.With("component", "jobs")
		kv := NewKVJobs(o, cfg.InstanceID)
		jobs, closeJobs = kv, kv.Close
	}
	return daemon.Deps{
		FS:         fsys,
		Dir:        dir,
		Catalog:    Catalog{DB: db, Compact: cfg.CompactPolicy()},
		Changes:    Catalog{DB: db},
		Bus:        NewBus(cfg, log.With("component", "nats")),
		History:    History{Store: store},
		Jobs:       jobs,
		IsConflict: IsConflict,
		API:        httpapi.New(db, httpapi.Options{History: store.History}),
		Logger:     log,
		Close: func() error {
			return errors.Join(closeJobs(), db.Close(), store.Close())
		},
	}, nil
}

// watchStore is where the watcher reads an s3:// database's tables: its
// bucket (settings from the AWS_* environment and the storage options, as
// matview reads them) and prefix. Nil for a local database.
func watchStore(cfg daemon.Config) (vfs.FS, string, error) {
	if !cfg.Remote() {
		return nil, "", nil
	}
	bucket, prefix, err := s3fs.ParseURI(cfg.DB)
	if err != nil {
		return nil, "", fmt.Errorf("open database %s: %w", cfg.DB, err)
	}
	settings, err := s3fs.Settings(nil, cfg.StorageOptions.Map())
	if err != nil {
		return nil, "", fmt.Errorf("open database %s: %w", cfg.DB, err)
	}
	fsys, err := s3fs.New(context.Background(), bucket, settings)
	if err != nil {
		return nil, "", fmt.Errorf("open database %s: %w", cfg.DB, err)
	}
	if prefix == "" {
		prefix = "/" // the bucket's root (s3fs drops the leading slash)
	}
	return fsys, prefix, nil
}
