package matview

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/mvd-project/mvd/lance"
)

// tableHandles keeps an open handle per table of the database for the
// listings (ListViews, the watermarks of the views over a view) and for
// the refreshes of the views over it (sharedTable), so that
// a listing finds each table's latest version by a probe from the one it
// saw last, not by listing _versions/ (a source keeps every version: a
// listing of thousands), and reuses the manifests it decoded. Safe for
// concurrent use.
type tableHandles struct {
	mu sync.Mutex
	t  map[string]*lance.Table
}

// listHandle returns the kept handle of table name, or opens one; fresh says
// which.
func (db *DB) listHandle(ctx context.Context, name string) (t *lance.Table, fresh bool, err error) {
	h := &db.listing
	h.mu.Lock()
	t = h.t[name]
	h.mu.Unlock()
	if t != nil {
		return t, false, nil
	}
	if t, err = lance.Open(ctx, db.fs, db.root(name)); err != nil {
		return nil, true, err
	}
	h.mu.Lock()
	if h.t == nil {
		h.t = map[string]*lance.Table{}
	}
	h.t[name] = t
	h.mu.Unlock()
	return t, true, nil
}

// dropHandle forgets the handle of table name (it failed: the next
// listing opens the table afresh).
func (db *DB) dropHandle(name string) {
	db.listing.mu.Lock()
	delete(db.listing.t, name)
	db.listing.mu.Unlock()
}

// keepHandles forgets the handles of tables not in names (dropped).
func (db *DB) keepHandles(names []string) {
	db.listing.mu.Lock()
	defer db.listing.mu.Unlock()
	for n := range db.listing.t {
		if !slices.Contains(names, n) {
			delete(db.listing.t, n)
		}
	}
}

// latestSchema returns the schema of table name's latest version, decoding
// only its schema: a listing needs each table's mv.definition, and a
// source's manifest holds a fragment per LanceDB commit (issue 22). A
// failure through a kept handle is retried once through a fresh one. The
// handle is returned (nil if the table could not be opened).
func (db *DB) latestSchema(ctx context.Context, name string) (*lance.Table, *lance.Schema, error) {
	for {
		t, fresh, err := db.listHandle(ctx, name)
		if err != nil {
			return nil, nil, err
		}
		s, err := headSchema(ctx, t)
		if err == nil || fresh {
			if err != nil {
				db.dropHandle(name)
			}
			return t, s, err
		}
		db.dropHandle(name)
	}
}

// headSchema is the schema of t's latest version.
func headSchema(ctx context.Context, t *lance.Table) (*lance.Schema, error) {
	h, err := t.Head(ctx)
	if err != nil {
		return nil, err
	}
	if err := t.CheckHead(ctx, h); err != nil {
		if !errors.Is(err, lance.ErrStaleHead) {
			return nil, err
		}
		// A newer version past a gap: only a listing finds it.
		m, err := t.Latest(ctx)
		if err != nil {
			return nil, err
		}
		return m.Schema, nil
	}
	return t.HeadSchema(ctx, h)
}

// latestOf returns table name's latest snapshot through its kept handle.
func (db *DB) latestOf(ctx context.Context, name string) (*lance.Snapshot, error) {
	for {
		t, fresh, err := db.listHandle(ctx, name)
		if err != nil {
			return nil, err
		}
		m, err := t.Latest(ctx)
		if err == nil || fresh {
			if err != nil {
				db.dropHandle(name)
			}
			return m, err
		}
		db.dropHandle(name)
	}
}

// TableHandle returns the handle of table name that the views' refreshes
// and listings share, opening it on first use. Another reader of the same
// tables in the process (the daemon's change watcher) reads through it so
// that a source's new version is read and decoded once per commit, not
// once per reader: a lance.Table caches the manifests it decoded. Reads
// through it are safe for concurrent use; a handle is only a path and
// that cache, so it follows whatever is committed on disk, by any writer
// (a drop and recreation included). A table that is not there fails with
// ErrNotFound wrapping lance's error (lance.ErrNotATable).
func (db *DB) TableHandle(ctx context.Context, name string) (*lance.Table, error) {
	return db.sharedTable(ctx, name)
}

// sharedTable returns the handle of table name that the refreshes of the
// views over it share: a source's new manifest is decoded once per
// commit, not once per view (a source of one-row LanceDB commits holds a
// fragment per commit, and its manifest costs as much; issue 22). Its
// reads are safe for concurrent use.
func (db *DB) sharedTable(ctx context.Context, name string) (*lance.Table, error) {
	if err := checkName("table", name); err != nil {
		return nil, err
	}
	t, _, err := db.listHandle(ctx, name)
	if err != nil {
		return nil, openError(name, err)
	}
	return t, nil
}
