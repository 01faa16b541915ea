package matview

import (
	"context"
	"time"

	"github.com/mvd-project/mvd/lance"
)

// CleanupOptions are the knobs of one View.CleanupVersions.
type CleanupOptions struct {
	// Retention, when set, is used instead of the view's own (its
	// metadata, else DefaultRetention); mvd view optimize's flags set it.
	Retention *Retention
	// Now is the clock's reading; zero means time.Now().
	Now time.Time
}

// CleanupResult is what one View.CleanupVersions removed and kept.
type CleanupResult struct {
	lance.CleanupStats
	// Retention is the retention applied.
	Retention Retention
	// KeptFrom is the oldest version kept whatever its age, because a
	// reader mvd knows of walks the versions after it (0: none).
	KeptFrom uint64
	// Duration is how long the cleanup took.
	Duration time.Duration
}

// CleanupVersions removes the view's old versions under its retention
// (lance.Table.CleanupOldVersions: crash-safe, never a tagged version nor a
// file a kept version references). Only the view's own table is touched,
// never its source.
//
// Besides the retention, it keeps every version from the oldest one a
// reader mvd knows of still needs: the view version its watermark names
// (so the view is not taken for drifted), the version its warm provenance
// index reflects, and the source version of every view defined over this
// one (so their refreshes stay incremental); and the version the index
// file on disk reflects, alone (its catch-up compares that version with
// the latest, so the index is caught up instead of rebuilt).
//
// It does not hold the view's refresh lock while it deletes: a refresh
// commits on the latest version, which is always kept, so the two never
// lose each other's work.
func (v *View) CleanupVersions(ctx context.Context, o CleanupOptions) (CleanupResult, error) {
	start := time.Now()
	p, r, err := v.cleanupPolicy(ctx, o)
	if err != nil {
		return CleanupResult{}, err
	}
	if saved := v.saveIndexForCleanup(p.Now); saved != 0 {
		p.Pinned = append(p.Pinned, saved)
	}
	st, err := v.table.CleanupOldVersions(ctx, p)
	res := CleanupResult{CleanupStats: st, Retention: r, KeptFrom: p.KeepFrom, Duration: time.Since(start)}
	if err != nil {
		return res, errorf(ErrStorage, err, "clean up view '%s': %v", v.name, err)
	}
	return res, nil
}

// CleanupDue reports whether CleanupVersions would remove a version now,
// at the cost of a listing and one manifest read: the daemon asks it
// often and cleans up only when it says so.
func (v *View) CleanupDue(ctx context.Context, now time.Time) (bool, error) {
	next, err := v.NextCleanup(ctx, now)
	return !next.IsZero() && next.Before(now), err
}

// downstreamRecheck is how soon NextCleanup asks again when only views
// over this one keep old versions: their refreshes release them.
const downstreamRecheck = 5 * time.Second

// NextCleanup returns when CleanupVersions will first remove one of the
// view's versions on disk now (before now: it would now), or the zero
// time if it never will. The views over this one are looked up (a listing
// of the database) only when the view's own retention and readers let a
// version go.
func (v *View) NextCleanup(ctx context.Context, now time.Time) (time.Time, error) {
	vm, _, err := v.current(ctx)
	if err != nil {
		return time.Time{}, err
	}
	r, err := v.retention(vm, CleanupOptions{})
	if err != nil {
		return time.Time{}, err
	}
	p := lance.CleanupPolicy{KeepFor: r.KeepFor, KeepLast: r.Keep, Now: now, KeepFrom: v.ownReadersFrom(vm)}
	if saved := v.indexFileVersion(); saved != 0 {
		p.Pinned = []uint64{saved}
	}
	next, err := v.table.NextCleanup(ctx, p)
	if err != nil || next.IsZero() {
		return next, v.storageErr(err)
	}
	if p.KeepFrom, err = v.readersFrom(ctx, vm); err != nil {
		return time.Time{}, err
	}
	later, err := v.table.NextCleanup(ctx, p)
	if err == nil && later.IsZero() {
		later = now.Add(downstreamRecheck)
	}
	return later, v.storageErr(err)
}

// A cleanup saves the view's provenance index first, so that the file's
// version, which it keeps, is the latest. A large view's index costs its
// whole encoding and writing each time (once a second under the daemon),
// so a save that took more than indexSaveCheap waits until
// indexSaveGap times its duration has passed since the last one (at most
// indexSaveEvery): saves then take at most about 1% of the time, and the
// file's version alone is kept meanwhile (its catch-up compares it with
// the latest; the versions between go).
const (
	indexSaveCheap = 5 * time.Millisecond
	indexSaveGap   = 100
	indexSaveEvery = 30 * time.Second
)

// indexSaveDue reports whether a cleanup at now saves the index, last
// saved at savedAt (zero: never by this View) in took.
func indexSaveDue(now, savedAt time.Time, took time.Duration) bool {
	if savedAt.IsZero() || took < indexSaveCheap {
		return true
	}
	return now.Sub(savedAt) >= min(indexSaveGap*took, indexSaveEvery)
}

// saveIndexForCleanup saves the warm index if it is due (indexSaveDue),
// and returns the version the file on disk reflects (0: none known),
// which the cleanup at now keeps. A failed save leaves the older file,
// still kept (the index is a cache).
func (v *View) saveIndexForCleanup(now time.Time) uint64 {
	if now.IsZero() {
		now = v.db.now()
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.index != nil && v.index.Version != v.savedVersion && indexSaveDue(now, v.savedAt, v.saveTook) {
		_ = v.saveIndexLocked()
	}
	return v.savedVersion
}

// indexFileVersion is the version the index file on disk reflects, as
// far as this View knows (0: none).
func (v *View) indexFileVersion() uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.savedVersion
}

func (v *View) storageErr(err error) error {
	if err == nil {
		return nil
	}
	return errorf(ErrStorage, err, "clean up view '%s': %v", v.name, err)
}

// cleanupPolicy is the lance policy of a cleanup of the view now.
func (v *View) cleanupPolicy(ctx context.Context, o CleanupOptions) (lance.CleanupPolicy, Retention, error) {
	vm, _, err := v.current(ctx)
	if err != nil {
		return lance.CleanupPolicy{}, Retention{}, err
	}
	r, err := v.retention(vm, o)
	if err != nil {
		return lance.CleanupPolicy{}, Retention{}, err
	}
	from, err := v.readersFrom(ctx, vm)
	if err != nil {
		return lance.CleanupPolicy{}, Retention{}, err
	}
	return lance.CleanupPolicy{KeepFor: r.KeepFor, KeepLast: r.Keep, Now: o.Now, KeepFrom: from}, r, nil
}

func (v *View) retention(vm *lance.Snapshot, o CleanupOptions) (Retention, error) {
	if o.Retention != nil {
		if err := o.Retention.Validate(); err != nil {
			return Retention{}, errorf(ErrInvalid, err, "clean up view '%s': %v", v.name, err)
		}
		return *o.Retention, nil
	}
	r, err := RetentionFromMetadata(vm.Schema.Metadata)
	if err != nil {
		return Retention{}, errorf(ErrInvalid, err, "view '%s': %v", v.name, err)
	}
	return r, nil
}

// readersFrom returns the oldest view version a reader mvd knows of still
// needs, with every version after it (0: none): the watermark's view
// version, the provenance index's versions, and the watermark source
// version of each view over this one.
func (v *View) readersFrom(ctx context.Context, vm *lance.Snapshot) (uint64, error) {
	from := v.ownReadersFrom(vm)
	downstream, err := v.db.downstreamWatermarks(ctx, v.name)
	if err != nil {
		return 0, err
	}
	for _, w := range downstream {
		if w != 0 && w < from {
			from = w
		}
	}
	return from, nil
}

// ownReadersFrom is readersFrom without the views over this one: the
// watermark's view version and the warm provenance index's.
func (v *View) ownReadersFrom(vm *lance.Snapshot) uint64 {
	from := vm.Version
	lower := func(x uint64) {
		if x != 0 && x < from {
			from = x
		}
	}
	if wm := watermarkOf(vm.Schema.Metadata); wm.Valid {
		lower(wm.ViewVersion)
	}
	v.mu.Lock()
	if v.index != nil {
		lower(v.index.Version)
	}
	v.mu.Unlock()
	return from
}

// downstreamWatermarks returns the source versions the watermarks of the
// views defined over table name record.
func (db *DB) downstreamWatermarks(ctx context.Context, name string) ([]uint64, error) {
	views, err := db.ListViews(ctx)
	if err != nil {
		return nil, err
	}
	var out []uint64
	for _, e := range views {
		if e.Definition == nil || e.Definition.SourceTable != name || len(e.Definition.SourceNamespace) != 0 {
			continue
		}
		m, err := db.latestOf(ctx, e.Name)
		if err != nil {
			continue // dropped meanwhile
		}
		if wm := watermarkOf(m.Schema.Metadata); wm.Valid {
			out = append(out, wm.SourceVersion)
		}
	}
	return out, nil
}
