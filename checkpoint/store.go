package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// ErrLocked is wrapped by Open when another process (or another Store in
// this one) holds the directory.
var ErrLocked = errors.New("checkpoint: state directory is locked")

// ErrNotFound is returned for a view with no progress or a missing blob.
var ErrNotFound = errors.New("checkpoint: not found")

// ErrClosed is returned by every method after Close.
var ErrClosed = errors.New("checkpoint: store closed")

// formatVersion is the key layout this package writes; Open refuses a
// directory written with another.
const formatVersion = "1"

// Options tune a Store. The zero value is usable.
type Options struct {
	// Logger receives Badger's log: its info lines at Debug, warnings and
	// errors at their levels. Nil discards it.
	Logger *slog.Logger
	// HistoryRetention is how many refresh records are kept per view
	// (default 1000); older ones are deleted as new ones arrive.
	HistoryRetention int
	// GCInterval is how often the value log is garbage-collected (default
	// 10m; negative disables). Only blobs larger than 1 MiB live there.
	GCInterval time.Duration
	// SourceStateGap is the least time between two writes of the kept
	// source states (default 1s; negative: none). Each wait is also at
	// least 10 times the last write's duration and as long as writing
	// its bytes at 256 KiB/s takes, at most 10s. A view's
	// state is as large as its source's manifest, which grows with every
	// fragment the source's owner adds: written after every refresh it
	// cost more than the refreshes (issue 22). States handed over during
	// the wait replace each other; only the latest is written.
	SourceStateGap time.Duration

	// stateAfter replaces time.After for the writer's waits (tests).
	stateAfter func(time.Duration) <-chan time.Time
}

// Store is an open state directory.
//
// A Store is safe for concurrent use by many goroutines; concurrent
// writers to one view are serialized by Badger transactions (conflicts
// are retried). It owns two goroutines (value-log GC, the source-state
// writer), stopped by Close.
type Store struct {
	db        *badger.DB
	dir       string
	retention int
	log       *slog.Logger

	// states writes the kept source states (nil in a read-only store).
	states *stateWriter

	mu     sync.RWMutex // held shared by operations, exclusively by Close
	closed bool
	// batchFault, if set (tests), is asked before each batchWrite's
	// flush; an error fails that batch with nothing of it written.
	batchFault func() error
	stop       context.CancelFunc
	wg         sync.WaitGroup
}

// Open opens (creating if needed) the state directory dir.
func Open(dir string, o Options) (*Store, error) {
	if dir == "" {
		return nil, errors.New("checkpoint: no state directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("checkpoint: create %s: %w", dir, err)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.HistoryRetention <= 0 {
		o.HistoryRetention = 1000
	}
	if o.GCInterval == 0 {
		o.GCInterval = 10 * time.Minute
	}
	db, err := openBadger(dir, log)
	if err != nil && !errors.Is(err, ErrLocked) && !errors.Is(err, fs.ErrPermission) {
		// The store is a cache of what the views and the stream hold: a
		// corrupt one (a damaged MANIFEST or table) is moved aside, kept
		// for inspection, and started afresh rather than stopping serve.
		aside := fmt.Sprintf("%s.corrupt-%s", dir, time.Now().UTC().Format("20060102T150405.000000000"))
		if rerr := os.Rename(dir, aside); rerr != nil {
			return nil, fmt.Errorf("%w (moving it aside: %w)", err, rerr)
		}
		log.Warn("state store unreadable: moved aside, starting a new one (refresh history before now is in the old one)", "dir", dir, "moved_to", aside, "err", err)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("checkpoint: create %s: %w", dir, err)
		}
		db, err = openBadger(dir, log)
	}
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, dir: dir, retention: o.HistoryRetention, log: log}
	if err := s.checkFormat(); err != nil {
		_ = db.Close()
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	if o.GCInterval > 0 {
		s.wg.Add(1)
		go s.gcLoop(ctx, o.GCInterval)
	}
	s.states = newStateWriter(o.SourceStateGap, o.stateAfter)
	s.states.running = true
	s.wg.Add(1)
	go s.runStates(ctx)
	return s, nil
}

// openBadger opens the Badger store in dir. A panic inside Badger on
// damaged files is returned as an error.
func openBadger(dir string, log *slog.Logger) (db *badger.DB, err error) {
	// A small state store: modest memtables and caches, small value-log
	// files, every write synced before it returns.
	bopts := badger.DefaultOptions(dir).
		WithSyncWrites(true).
		WithLogger(badgerLogger{log}).
		WithMemTableSize(8 << 20).
		WithNumMemtables(2).
		WithNumLevelZeroTables(2).
		WithBlockCacheSize(8 << 20).
		WithIndexCacheSize(4 << 20).
		WithValueLogFileSize(64 << 20).
		WithNumCompactors(2)
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, fmt.Errorf("checkpoint: open %s: %w: %v", dir, errCorrupt, r)
		}
	}()
	db, err = badger.Open(bopts)
	if err != nil {
		if strings.Contains(err.Error(), "Cannot acquire directory lock") {
			holder := ""
			if pid, rerr := os.ReadFile(filepath.Join(dir, "LOCK")); rerr == nil && len(pid) > 0 {
				holder = fmt.Sprintf(" (pid %s)", strings.TrimSpace(string(pid)))
			}
			return nil, fmt.Errorf("%w: %s is in use by another process%s", ErrLocked, dir, holder)
		}
		return nil, fmt.Errorf("checkpoint: open %s: %w", dir, err)
	}
	return db, nil
}

// errCorrupt marks a panic of Badger's on opening damaged files.
var errCorrupt = errors.New("store damaged")

// checkFormat records the store's format in a new store and refuses a
// store of another format.
func (s *Store) checkFormat() error {
	return s.db.Update(func(txn *badger.Txn) error { return s.formatIn(txn, true) })
}

// formatIn checks the format recorded in txn; an empty store gets this
// build's format when record is set (the caller's txn must be writable).
func (s *Store) formatIn(txn *badger.Txn, record bool) error {
	key := []byte("format")
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		if record {
			return txn.Set(key, []byte(formatVersion))
		}
		return nil // an empty store: nothing recorded yet
	}
	if err != nil {
		return fmt.Errorf("checkpoint: read format of %s: %w", s.dir, err)
	}
	v, err := item.ValueCopy(nil)
	if err != nil {
		return fmt.Errorf("checkpoint: read format of %s: %w", s.dir, err)
	}
	if string(v) != formatVersion {
		return fmt.Errorf("checkpoint: %s has state format %q; this build reads %q", s.dir, v, formatVersion)
	}
	return nil
}

// Dir is the state directory.
func (s *Store) Dir() string { return s.dir }

// Close stops the GC goroutine and the source-state writer (which writes
// the states still waiting first), waits for operations in flight and
// closes Badger (flushing its memtables). Safe to call more than once.
func (s *Store) Close() error {
	s.stop()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("checkpoint: close %s: %w", s.dir, err)
	}
	return nil
}

func (s *Store) gcLoop(ctx context.Context, every time.Duration) {
	defer s.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// Each successful pass rewrites one file; repeat until none is
		// worth it.
		for ctx.Err() == nil {
			err := s.db.RunValueLogGC(0.5)
			if err != nil {
				if !errors.Is(err, badger.ErrNoRewrite) && !errors.Is(err, badger.ErrRejected) {
					s.log.Warn("state value-log GC", "dir", s.dir, "err", err)
				}
				break
			}
		}
	}
}

// update runs fn in a read-write transaction, retrying on conflicts with
// concurrent writers, under the shared lock.
func (s *Store) update(ctx context.Context, fn func(txn *badger.Txn) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := s.db.Update(fn)
		if !errors.Is(err, badger.ErrConflict) || attempt >= 1000 {
			return err
		}
	}
}

// view runs fn in a read-only transaction under the shared lock.
func (s *Store) view(ctx context.Context, fn func(txn *badger.Txn) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.db.View(fn)
}

// badgerLogger routes Badger's log to slog, quietly: its info lines (table
// counts at open, compactions) go to Debug.
type badgerLogger struct{ l *slog.Logger }

func (b badgerLogger) log(level slog.Level, format string, args []any) {
	if !b.l.Enabled(context.Background(), level) {
		return
	}
	b.l.Log(context.Background(), level, strings.TrimSpace(fmt.Sprintf(format, args...)), "component", "badger")
}

func (b badgerLogger) Errorf(format string, args ...any)   { b.log(slog.LevelError, format, args) }
func (b badgerLogger) Warningf(format string, args ...any) { b.log(slog.LevelWarn, format, args) }
func (b badgerLogger) Infof(format string, args ...any)    { b.log(slog.LevelDebug, format, args) }
func (b badgerLogger) Debugf(format string, args ...any)   { b.log(slog.LevelDebug-4, format, args) }
