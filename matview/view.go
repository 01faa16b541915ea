package matview

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/provenance"
)

// View is one materialized view of a DB.
//
// Concurrency: a View is safe for concurrent use. Refreshes through one
// View are serialized (the second waits, then finds the first's work done);
// refreshes through different Views or processes — or LanceDB's own
// refresh — race at the Lance commit, where exactly one wins and the others
// fail with ErrConflict having written nothing. A View is meant to be owned
// by one long-lived refresher (the daemon's), which it makes cheap: it keeps
// the compiled plan and the provenance index warm between refreshes.
type View struct {
	db          *DB
	name        string
	table       *lance.Table
	incarnation string

	mu sync.Mutex // serializes Refresh; guards the warm state below
	// plan is the definition compiled against planSchema (the source's
	// Arrow schema at the version last refreshed to).
	plan       *plan.Plan
	planDef    string
	planSchema *arrow.Schema
	// index reflects index.Version of the view; savedVersion is the
	// version of the index file on disk (0: unknown).
	index        *provenance.Index
	savedVersion uint64
	// savedAt is when this View last wrote the index file (zero: never),
	// and saveTook how long that took.
	savedAt  time.Time
	saveTook time.Duration
	// unsaved is the index version whose failed save was last reported
	// (a warning once per version, not once per attempt).
	unsaved uint64
	// src is the source table handle of the last refresh (srcName names
	// it), kept so that its decoded-manifest cache and listing state carry
	// over from one refresh to the next. A handle is only a path: every
	// read still goes to the files, so reusing it can never read a stale
	// version; a failed read drops it.
	src     *lance.Table
	srcName string
	// kept is the source state last handed to the state store, which the
	// next one is made from (lance.Snapshot.StateSince); set by the
	// store's writer goroutine.
	kept atomic.Pointer[lance.VersionState]
	// stampScore predicts from the last refreshes whether the next one
	// commits the watermark alone (noteStampOnly, speculates); while it
	// does, a refresh stages that commit while it reads the changes.
	stampScore int
	// speculated counts the staged watermark-only commits published;
	// prebuilt those of them staged from the commit built ahead.
	speculated, prebuilt int
	// wakeup measures how long a refresh's goroutine blocked on the
	// other's handoff takes to resume: how long it polls first.
	wakeup wakeup
	// budgetPeak is the most workers the last refresh under a CPU budget
	// ran at once (its budget.Limiter's peak), for tests of the cap.
	budgetPeak int

	// beforeCompactCommit, if set (tests), runs between a compaction's
	// rewrite and its commit: where another writer's commit races it.
	beforeCompactCommit func()

	defMu  sync.Mutex // guards the decoded definition (current)
	def    *plan.Definition
	defRaw string // the mv.definition text def was decoded from
}

// OpenView opens view name. A table without a view definition is refused
// with ErrNotAView (LanceDB's text), an unknown kind with ErrUnsupported.
func (db *DB) OpenView(ctx context.Context, name string) (*View, error) {
	db.mu.Lock()
	if v, ok := db.open[name]; ok {
		db.mu.Unlock()
		// A handle whose background sync failed refuses every commit:
		// opening the view again must give a new one.
		if _, _, err := v.current(ctx); err == nil && v.table.SyncFailed() == nil {
			return v, nil
		}
		db.mu.Lock()
		delete(db.open, name)
	}
	db.mu.Unlock()
	t, err := db.openTable(ctx, name)
	if err != nil {
		return nil, err
	}
	m, err := t.Latest(ctx)
	if err != nil {
		return nil, errorf(ErrInvalid, err, "read view '%s': %v", name, err)
	}
	raw, ok := m.Schema.Metadata[KeyDefinition]
	if !ok {
		return nil, errorf(ErrNotAView, nil, "Table '%s' is not a materialized view", name)
	}
	if _, err := decodeDefinition(name, raw); err != nil {
		return nil, err
	}
	v := &View{db: db, name: name, table: t, incarnation: m.Schema.Metadata[KeyIncarnation]}
	db.mu.Lock()
	defer db.mu.Unlock()
	if prev, ok := db.open[name]; ok && prev.incarnation == v.incarnation {
		return prev, nil
	}
	db.open[name] = v
	return v, nil
}

// Name returns the view's name.
func (v *View) Name() string { return v.name }

// Table returns the view's Lance table.
func (v *View) Table() *lance.Table { return v.table }

// current loads the view's latest version and checks it is still the
// incarnation this handle opened (not dropped and recreated meanwhile).
// The definition is decoded once per stored text and shared between the
// handle's refreshes: it is read-only.
func (v *View) current(ctx context.Context) (*lance.Snapshot, *plan.Definition, error) {
	return v.load(ctx, true)
}

// load is current; shared says whether the definition may be the one
// decoded before (false: a fresh copy, for callers that hand it out).
func (v *View) load(ctx context.Context, shared bool) (*lance.Snapshot, *plan.Definition, error) {
	m, err := v.table.Latest(ctx)
	if err != nil {
		if !v.db.exists(v.name) {
			return nil, nil, errorf(ErrNotFound, err, "view '%s' was not found: it was dropped", v.name)
		}
		return nil, nil, errorf(ErrInvalid, err, "read view '%s': %v", v.name, err)
	}
	md := m.Schema.Metadata
	raw, ok := md[KeyDefinition]
	if !ok {
		return nil, nil, errorf(ErrNotAView, nil, "Table '%s' is not a materialized view", v.name)
	}
	if inc := md[KeyIncarnation]; inc != v.incarnation {
		return nil, nil, errorf(ErrNotFound, nil, "view '%s' is not the incarnation this refresh was requested for: it was dropped and recreated", v.name)
	}
	if shared {
		v.defMu.Lock()
		d := v.def
		same := d != nil && v.defRaw == raw
		v.defMu.Unlock()
		if same {
			return m, d, nil
		}
	}
	d, err := decodeDefinition(v.name, raw)
	if err != nil {
		return nil, nil, err
	}
	if shared {
		v.defMu.Lock()
		v.def, v.defRaw = d, raw
		v.defMu.Unlock()
	}
	return m, d, nil
}

// Definition returns the view's definition as stored in its latest
// version (one manifest read).
func (v *View) Definition() (*plan.Definition, error) {
	_, d, err := v.load(context.Background(), false)
	return d, err
}

// Info is a view's definition, watermark and current version.
type Info struct {
	Name       string
	Definition *plan.Definition
	Watermark  Watermark
	// Version is the view's latest version; Rows its live rows.
	Version uint64
	// CommittedAt is when Version was committed.
	CommittedAt time.Time
	Rows        uint64
	// Metadata holds every mv.* key of the view (policies included).
	Metadata map[string]string
}

// Info describes the view at its latest version.
func (v *View) Info(ctx context.Context) (*Info, error) {
	m, d, err := v.load(ctx, false)
	if err != nil {
		return nil, err
	}
	md := map[string]string{}
	for k, val := range m.Schema.Metadata {
		if len(k) > len(KeyPrefix) && k[:len(KeyPrefix)] == KeyPrefix {
			md[k] = val
		}
	}
	return &Info{Name: v.name, Definition: d, Watermark: watermarkOf(m.Schema.Metadata), Version: m.Version, CommittedAt: m.Timestamp, Rows: m.LiveRows(), Metadata: md}, nil
}

// saveIndex writes the warm provenance index if the file on disk lags.
// It returns the warning of a failure ("" when none): the index is a
// cache.
func (v *View) saveIndex() (warning string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.saveIndexLocked(); err != nil && v.index.Version != v.unsaved {
		v.unsaved = v.index.Version
		return indexWarning(v.name, err)
	}
	return ""
}
