package checkpoint

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/dgraph-io/badger/v4"
)

// OpenReadOnly opens the state directory dir for reading only, as a
// command that shows what the daemon recorded does while no daemon runs:
// it writes nothing (no compaction, no replayed log made durable) and
// shares the directory with other readers. It fails with ErrLocked while
// a daemon holds the directory (ask the daemon instead), with an error
// wrapping fs.ErrNotExist when dir holds no store, and when Badger needs
// to repair the store first (a daemon killed mid-write: its next start
// repairs it). Write methods fail on the returned Store.
func OpenReadOnly(dir string, o Options) (*Store, error) {
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); err != nil {
		return nil, fmt.Errorf("checkpoint: no state store in %s: %w", dir, err)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	bopts := badger.DefaultOptions(dir).
		WithReadOnly(true).
		WithLogger(badgerLogger{log}).
		WithMemTableSize(8 << 20).
		WithNumMemtables(2).
		WithBlockCacheSize(8 << 20).
		WithIndexCacheSize(4 << 20).
		WithValueLogFileSize(64 << 20)
	db, err := badger.Open(bopts)
	if err != nil {
		if strings.Contains(err.Error(), "Cannot acquire directory lock") {
			return nil, fmt.Errorf("%w: %s is in use by a daemon", ErrLocked, dir)
		}
		return nil, fmt.Errorf("checkpoint: open %s read-only: %w", dir, err)
	}
	s := &Store{db: db, dir: dir, retention: 1, log: log, stop: func() {}}
	if err := s.readFormat(); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// readFormat checks the store's format without writing one.
func (s *Store) readFormat() error {
	return s.db.View(func(txn *badger.Txn) error { return s.formatIn(txn, false) })
}
