package vfs

import (
	"errors"
	"fmt"
)

// Unsynced returns fsys with every file and directory sync skipped: what
// LanceDB's local object store does, for honest comparisons and for users
// who trade durability for latency. Commits stay atomic (put-if-not-exists
// links, files complete before they are referenced), so a killed process
// never leaves a torn table; but a power loss or kernel crash can lose the
// latest commits, or leave a published manifest pointing at files whose
// contents never reached the disk. Never the default.
func Unsynced(fsys FS) FS {
	if u, ok := fsys.(unsyncedFS); ok {
		return u
	}
	return unsyncedFS{FS: fsys}
}

// IsUnsynced reports whether fsys skips syncs (it was made by Unsynced).
func IsUnsynced(fsys FS) bool {
	_, ok := fsys.(unsyncedFS)
	return ok
}

type unsyncedFS struct{ FS }

func (u unsyncedFS) Create(name string) (WritableFile, error) {
	f, err := u.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return unsyncedFile{WritableFile: f}, nil
}

func (unsyncedFS) SyncDir(string) error { return nil }

// CreateTemp passes unnamed files through, their syncs skipped.
func (u unsyncedFS) CreateTemp(dir string) (TempFile, error) {
	tc, ok := u.FS.(TempCreator)
	if !ok {
		return nil, fmt.Errorf("create unnamed file in %s: %w", dir, errors.ErrUnsupported)
	}
	f, err := tc.CreateTemp(dir)
	if err != nil {
		return nil, err
	}
	return unsyncedTemp{TempFile: f}, nil
}

type unsyncedTemp struct{ TempFile }

func (unsyncedTemp) Sync() error { return nil }

type unsyncedFile struct{ WritableFile }

func (unsyncedFile) Sync() error { return nil }

// Durability modes, as spelled in configuration
// (`durability: fsync|strict|none`).
const (
	// DurabilityFsync syncs every commit (the default). A commit that
	// changes no rows (lance.Commit.DeferSync: a refresh that moves only
	// a view's watermark) has its name synced right after it returns.
	DurabilityFsync = "fsync"
	// DurabilityStrict syncs every commit, names included, before it
	// returns.
	DurabilityStrict = "strict"
	// DurabilityNone skips every sync (Unsynced): unsafe against power loss.
	DurabilityNone = "none"
)

// WithDurability returns fsys for a durability mode: itself for "fsync",
// "strict" or "", Unsynced(fsys) for "none"; any other mode is an error.
// (What separates fsync from strict is the commits' DeferSync, set by
// their callers.)
func WithDurability(fsys FS, mode string) (FS, error) {
	if err := CheckDurability(mode); err != nil {
		return nil, err
	}
	if mode == DurabilityNone {
		return Unsynced(fsys), nil
	}
	return fsys, nil
}

// CheckDurability reports whether mode is a durability mode ("" is
// "fsync"), for flags and configuration checked before anything opens.
func CheckDurability(mode string) error {
	switch mode {
	case "", DurabilityFsync, DurabilityStrict, DurabilityNone:
		return nil
	}
	return fmt.Errorf("durability %q: want %s, %s or %s", mode, DurabilityFsync, DurabilityStrict, DurabilityNone)
}
