package matview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/vfs"
)

// Options configures a DB.
type Options struct {
	// FS is the filesystem (vfs.OS() when nil); tests inject faults here.
	FS vfs.FS
	// Now is the clock for mv.refreshed_at_ms (time.Now when nil).
	Now func() time.Time
	// Durability is the durability of view commits (vfs.WithDurability
	// over FS): vfs.DurabilityFsync when empty, a commit durable when its
	// refresh returns, except that a refresh that moves only the
	// watermark has its version's name synced right after it returns, in
	// the background (lance.Commit.DeferSync: a power loss just then can
	// take the view back one refresh, to the same rows);
	// vfs.DurabilityStrict, every commit durable when its refresh
	// returns; vfs.DurabilityNone, no fsync at all, as LanceDB's local
	// store.
	Durability string
	// LanceDBCompatible refuses to create views whose definition LanceDB
	// 0.39 cannot plan (plan.LanceDBUnsupported), as the LanceDBCompatible
	// create option does for one view.
	LanceDBCompatible bool
	// SourceStates, if set, keeps each view's source state at its
	// watermark, so a refresh whose watermark version was cleaned up
	// stays incremental (the daemon's checkpoint store). Nil: such a
	// refresh rebuilds.
	SourceStates SourceStateStore
	// StorageOptions are the object-store settings of an s3:// database,
	// with LanceDB's keys (aws_endpoint, aws_region, allow_http, …),
	// over the environment's (AWS_ENDPOINT, …; see vfs/s3fs.Settings).
	StorageOptions map[string]string
}

// DB is a database directory holding tables and views. It is safe for
// concurrent use. It keeps each view it opened (OpenView returns the same
// *View for a name), so warm state — the compiled plan and the provenance
// index — survives across refreshes in one process; Close saves what is
// worth saving.
type DB struct {
	dir string
	fs  vfs.FS
	now func() time.Time
	// strict: every commit's name synced before its refresh returns
	// (Options.Durability), no DeferSync.
	strict bool
	// lancedbCompatible: Options.LanceDBCompatible.
	lancedbCompatible bool
	// states: Options.SourceStates.
	states SourceStateStore
	mu     sync.Mutex
	open   map[string]*View
	// warnings are what Close noted but did not fail for (Warnings).
	warnings []string
	// objectStore: an s3:// database, whose directories cannot be renamed.
	objectStore bool
	// listing keeps the tables' handles for the listings (listing.go).
	listing tableHandles
}

var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// Open opens the database directory dir, or the object-store database
// s3://BUCKET/PREFIX (table NAME at s3://BUCKET/PREFIX/NAME.lance). Any
// other URI scheme (db://…) is refused before anything is requested.
func Open(dir string) (*DB, error) { return OpenWith(dir, Options{}) }

// OpenWith is Open with options.
func OpenWith(dir string, o Options) (*DB, error) {
	remote := false
	if schemeRE.MatchString(dir) {
		if !strings.HasPrefix(dir, "s3://") {
			return nil, errorf(ErrUnsupported, nil, "database %s: materialized views are supported on local databases and s3:// only", dir)
		}
		fsys, prefix, err := openS3(dir, o)
		if err != nil {
			return nil, err
		}
		o.FS, dir, remote = fsys, prefix, true
	}
	if o.FS == nil {
		o.FS = vfs.OS()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	fsys, err := vfs.WithDurability(o.FS, o.Durability)
	if err != nil {
		return nil, errorf(ErrInvalid, err, "open database %s: %v", dir, err)
	}
	o.FS = fsys
	if remote {
		// A prefix exists once something is under it: an empty one is an
		// empty database, as for LanceDB.
		return &DB{dir: dir, fs: o.FS, now: o.Now, strict: o.Durability == vfs.DurabilityStrict, lancedbCompatible: o.LanceDBCompatible,
			states: o.SourceStates, open: map[string]*View{}, objectStore: true}, nil
	}
	dir = filepath.ToSlash(filepath.Clean(dir))
	st, err := o.FS.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errorf(ErrNotFound, err, "database directory %s does not exist", dir)
		}
		return nil, errorf(ErrNotFound, err, "database directory %s: %v", dir, err)
	}
	if !st.IsDir() {
		return nil, errorf(ErrInvalid, nil, "database %s is not a directory", dir)
	}
	return &DB{dir: dir, fs: o.FS, now: o.Now, strict: o.Durability == vfs.DurabilityStrict, lancedbCompatible: o.LanceDBCompatible,
		states: o.SourceStates, open: map[string]*View{}}, nil
}

// Dir returns the database directory.
func (db *DB) Dir() string { return db.dir }

// Close saves the warm state of the views opened through db (their
// provenance indexes) and forgets them. The DB stays usable. An index
// that cannot be saved does not fail it: the index is a cache (the next
// refresh catches up the older file or builds it anew), and the refreshes
// it follows have committed; Warnings reports it.
func (db *DB) Close() error {
	db.mu.Lock()
	views := make([]*View, 0, len(db.open))
	for _, v := range db.open {
		views = append(views, v)
	}
	db.open = map[string]*View{}
	db.mu.Unlock()
	var errs []error
	var warned []string
	for _, v := range views {
		if w := v.saveIndex(); w != "" {
			warned = append(warned, w)
		}
		errs = append(errs, v.table.Flush())
	}
	db.mu.Lock()
	db.warnings = append(db.warnings, warned...)
	db.mu.Unlock()
	return errors.Join(errs...)
}

// Warnings returns, and forgets, what Close noted without failing: a
// provenance index it could not save.
func (db *DB) Warnings() []string {
	db.mu.Lock()
	defer db.mu.Unlock()
	w := db.warnings
	db.warnings = nil
	return w
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// checkName refuses names that are not plain table names.
func checkName(what, name string) error {
	if name == "" {
		return errorf(ErrInvalid, nil, "%s name is empty", what)
	}
	if !nameRE.MatchString(name) || name == "." || name == ".." {
		return errorf(ErrInvalid, nil, "invalid %s name '%s': names may contain only letters, digits, underscores, hyphens and periods", what, name)
	}
	return nil
}

// CheckViewName refuses a name no view can have (CreateView's rules),
// with ErrInvalid: for commands that take view names without opening
// them (mvd subscribe --view).
func CheckViewName(name string) error { return checkName("view", name) }

// root is the directory of table name.
func (db *DB) root(name string) string { return path.Join(db.dir, name+lance.TableSuffix) }

// exists reports whether table name has a directory.
func (db *DB) exists(name string) bool {
	_, err := db.fs.Stat(db.root(name))
	return err == nil
}

// openTable opens table name, with LanceDB's not-found text.
func (db *DB) openTable(ctx context.Context, name string) (*lance.Table, error) {
	if err := checkName("table", name); err != nil {
		return nil, err
	}
	t, err := lance.Open(ctx, db.fs, db.root(name))
	if err != nil {
		return nil, openError(name, err)
	}
	return t, nil
}

// openError is the error of a failure to open table name.
func openError(name string, err error) error {
	if errors.Is(err, lance.ErrNotATable) || errors.Is(err, fs.ErrNotExist) {
		return errorf(ErrNotFound, err, "Table '%s' was not found", name)
	}
	return errorf(ErrInvalid, err, "open table '%s': %v", name, err)
}

// TableNames lists the tables of the database (views included), sorted.
func (db *DB) TableNames() ([]string, error) {
	ents, err := db.fs.ReadDir(db.dir)
	if err != nil {
		return nil, fmt.Errorf("list database %s: %w", db.dir, err)
	}
	var names []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e, lance.TableSuffix); ok && n != "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names, nil
}

// ViewEntry is one view of a listing. Err is set, and Definition nil, when
// the view cannot be read (a corrupt or hand-edited mv.definition, a kind
// mvd cannot refresh): it is reported for that view alone.
type ViewEntry struct {
	Name       string
	Definition *plan.Definition
	Err        error
}

// ListViews lists the views of the database, sorted by name: every table
// whose latest schema carries mv.definition. A view whose latest version
// cannot be read (a damaged manifest) is listed with the error, when an
// older version of it is a view, it holds mvd's view state (_mvd/) or its
// damaged manifest still names mv.definition;
// other tables that cannot be read are skipped, as LanceDB does.
func (db *DB) ListViews(ctx context.Context) ([]ViewEntry, error) {
	names, err := db.TableNames()
	if err != nil {
		return nil, err
	}
	db.keepHandles(names)
	var out []ViewEntry
	for _, n := range names {
		t, schema, err := db.latestSchema(ctx, n)
		if err != nil {
			if db.wasView(ctx, t, n) {
				out = append(out, ViewEntry{Name: n, Err: errorf(ErrInvalid, err, "view '%s' cannot be read: %v", n, err)})
			}
			continue
		}
		raw, ok := schema.Metadata[KeyDefinition]
		if !ok {
			continue
		}
		d, err := decodeDefinition(n, raw)
		out = append(out, ViewEntry{Name: n, Definition: d, Err: err})
	}
	return out, nil
}

// decodeDefinition decodes a stored definition with LanceDB's error texts.
func decodeDefinition(view, raw string) (*plan.Definition, error) {
	d, err := plan.Decode(raw)
	if err != nil {
		var ke *plan.KindError
		if errors.As(err, &ke) {
			return nil, errorf(ErrUnsupported, err, "materialized view '%s' is defined by '%s', which this version of mvd cannot refresh", view, ke.Kind)
		}
		return nil, errorf(ErrInvalid, err, "view '%s': %v", view, err)
	}
	return d, nil
}

// wasView reports whether table name, whose latest version cannot be
// read, is a view: mvd's view state (_mvd/) is in it, or its newest
// readable version carries mv.definition. t may be nil (not opened).
func (db *DB) wasView(ctx context.Context, t *lance.Table, name string) bool {
	if _, err := db.fs.Stat(path.Join(db.root(name), "_mvd")); err == nil {
		return true
	}
	if t == nil {
		return false
	}
	refs, err := t.Versions(ctx)
	if err != nil || len(refs) == 0 {
		return false
	}
	for i := len(refs) - 1; i >= 0; i-- {
		if m, err := t.Checkout(ctx, refs[i].Version); err == nil {
			_, ok := m.Schema.Metadata[KeyDefinition]
			return ok
		}
	}
	// No version can be read (a view never refreshed has one): the key is
	// in the damaged manifest's bytes unless the damage hit it.
	b, err := vfs.ReadFile(db.fs, path.Join(db.root(name), "_versions", refs[len(refs)-1].File))
	return err == nil && bytes.Contains(b, []byte(KeyDefinition))
}

// DropView removes view name (a table that is not a view is refused). A
// view whose latest version cannot be read (ListViews lists it with its
// error) is removed too.
func (db *DB) DropView(ctx context.Context, name string) error {
	v, err := db.OpenView(ctx, name)
	if err != nil {
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrNotAView) || checkName("view", name) != nil {
			return err
		}
		t, _ := lance.Open(ctx, db.fs, db.root(name))
		if !db.wasView(ctx, t, name) {
			return err
		}
	} else {
		db.mu.Lock()
		delete(db.open, name)
		db.mu.Unlock()
		// A refresh under way finishes first, and the version hint its
		// commit writes in the background is written before the files go.
		v.mu.Lock()
		_ = v.table.Flush() // the view goes either way
		v.mu.Unlock()
	}
	if db.objectStore {
		return db.dropObjects(name)
	}
	// Rename first, so the name is free at once and a crash halfway
	// leaves garbage, not a half-deleted view.
	trash := path.Join(db.dir, fmt.Sprintf(".mvd-drop-%s-%d", name, db.now().UnixNano()))
	if err := db.fs.Rename(db.root(name), trash); err != nil {
		return errorf(ErrStorage, err, "drop view '%s': %v", name, err)
	}
	if err := db.fs.SyncDir(db.dir); err != nil {
		return errorf(ErrStorage, err, "drop view '%s': sync %s: %v", name, db.dir, err)
	}
	if err := vfs.RemoveAll(db.fs, trash); err != nil {
		return errorf(ErrStorage, err, "drop view '%s': the view is gone but removing its files failed: %v", name, err)
	}
	return nil
}
