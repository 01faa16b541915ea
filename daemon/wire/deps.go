package wire

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"path/filepath"
	"strings"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/control/httpapi"
	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/s3fs"
)

// Deps opens what `mvd serve` runs on: the database's views (matview),
// NATS (stream; started by the server) and the state store (checkpoint,
// in STATE/state). It is a daemon.DepsFunc; Deps.Close closes what it
// opened.
func Deps(cfg daemon.Config, log *slog.Logger) (daemon.Deps, error) {
	return depsOn(cfg, log, nil)
}

// depsOn is Deps reading a local database through fsys (nil: the disk):
// tests count what the daemon reads.
func depsOn(cfg daemon.Config, log *slog.Logger, fsys vfs.FS) (daemon.Deps, error) {
	store, err := checkpoint.Open(filepath.Join(cfg.StateDir, "state"), checkpoint.Options{Logger: log.With("component", "checkpoint")})
	if err != nil {
		return daemon.Deps{}, fmt.Errorf("open state store: %w", err)
	}
	// The store keeps each view's source state at its watermark, so a
	// refresh after the source's owner cleaned that version up stays
	// incremental.
	db, err := matview.OpenWith(cfg.DB, matview.Options{FS: fsys, Durability: cfg.Durability, SourceStates: store, StorageOptions: cfg.StorageOptions.Map()})
	if err != nil {
		_ = store.Close()
		return daemon.Deps{}, fmt.Errorf("open database %s: %w", cfg.DB, err)
	}
	wfs, dir, err := watchStore(cfg)
	if err != nil {
		_ = errors.Join(db.Close(), store.Close())
		return daemon.Deps{}, err
	}
	if wfs == nil {
		wfs, dir = fsys, cfg.DB
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
		FS:         wfs,
		Dir:        dir,
		OpenTable:  sharedTables(db, wfs, dir),
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

// sharedTables is the watcher's OpenTable over the database db, watched
// at dir on fsys: a table of the database (dir/NAME.lance) is read
// through db's handle, the one the refreshes of the views over it share,
// so that each new source version's manifest is read and decoded once
// per commit, not by the watcher and again by the refreshes (issue 22).
// On an s3:// database dir is the watcher's prefix ("/" for the bucket's
// root, where db's roots have no leading slash: the same objects). Any
// other root is opened on its own; so is a table db fails to open for a
// reason other than its absence (a name db refuses, an I/O error), and
// then lance's own error, not db's, is the one returned.
func sharedTables(db *matview.DB, fsys vfs.FS, dir string) func(context.Context, string) (*lance.Table, error) {
	if fsys == nil {
		fsys = vfs.OS()
	}
	dir = path.Clean(dir)
	return func(ctx context.Context, root string) (*lance.Table, error) {
		name, ok := strings.CutSuffix(path.Base(root), lance.TableSuffix)
		if ok && name != "" && path.Dir(root) == dir {
			t, err := db.TableHandle(ctx, name)
			if err == nil || errors.Is(err, lance.ErrNotATable) || errors.Is(err, fs.ErrNotExist) {
				// Not there is as true of db's handle as of a new one:
				// no second try (a request more on S3 at every poll).
				return t, err
			}
		}
		return lance.Open(ctx, fsys, root)
	}
}
