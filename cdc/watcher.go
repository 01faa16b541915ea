package cdc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// Mode chooses how the Watcher learns of changes.
type Mode int

const (
	// ModeAuto uses fsnotify when it can be started and polls otherwise.
	ModeAuto Mode = iota
	// ModeNotify requires fsnotify: Run fails if it cannot be started.
	ModeNotify
	// ModePoll never uses fsnotify: only the periodic probe and listing.
	ModePoll
)

func (m Mode) String() string {
	switch m {
	case ModeAuto:
		return "auto"
	case ModeNotify:
		return "fsnotify"
	case ModePoll:
		return "poll"
	}
	return fmt.Sprintf("mode(%d)", int(m))
}

// ParseMode parses "auto", "fsnotify" (or "notify") and "poll".
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(s) {
	case "", "auto":
		return ModeAuto, nil
	case "fsnotify", "notify":
		return ModeNotify, nil
	case "poll":
		return ModePoll, nil
	}
	return 0, fmt.Errorf("unknown watch mode %q (want auto, fsnotify or poll)", s)
}

// Options configure a Watcher.
type Options struct {
	// FS reads the tables; nil means vfs.OS(). With fsnotify, the FS's
	// paths must be the operating system's paths.
	FS vfs.FS
	// Dir is the database directory.
	Dir string
	// Mode is how changes are noticed (default ModeAuto).
	Mode Mode
	// PollInterval is how often every table is looked at without an
	// event: the only source of news in ModePoll (default 100ms) and the
	// fallback for missed events otherwise (default 1s).
	PollInterval time.Duration
	// ListInterval is how often the versions of watched tables are
	// listed in full, to step over cleaned-up or unreadable versions that
	// probing the next version cannot see (default 10s).
	ListInterval time.Duration
	// ObjectStore says FS is an object store (S3), where every request
	// is a round trip (and a LIST costs ten times a HEAD) and there are
	// no change events: each poll probes each watched table's next
	// version with one request, and the database is listed for new and
	// dropped tables every DirInterval; a table's incarnation is checked
	// when its probe finds something and at every full listing
	// (ListInterval), which is also when an unwatched table's
	// recreation, or a watched one's recreation without a newer version,
	// is noticed. An empty database prefix is an empty database, not an
	// error.
	ObjectStore bool
	// DirInterval is how often an object store's database is listed
	// between full listings (default 1s; never less than PollInterval).
	DirInterval time.Duration
	// Buffer is the capacity of the Events channel (default 64).
	Buffer int
	// Logger receives the watcher's logs (default slog.Default()).
	Logger *slog.Logger
	// OpenTable opens the table at root (a path under Dir, on FS); nil
	// means lance.Open. A daemon whose refreshes read the same tables
	// passes a function returning the handles they use: a lance.Table
	// caches the manifests it decoded, so through one shared handle a
	// source's new version is read and decoded once per commit, not once
	// here and again in every refresh (a source of one-row commits holds
	// a fragment per commit, and its manifest costs as much; issue 22).
	// It is asked again before each new version of a watched table is
	// read, to follow a handle its owner replaced, so it should be a
	// lookup; it is called from Run's goroutine and from WatchNow's
	// callers, so it must be safe for concurrent use; its errors must
	// keep lance's (ErrNotATable for a root that is not a table).
	OpenTable func(ctx context.Context, root string) (*lance.Table, error)
	// WritebackAfter is how long after reporting a new version of a
	// table watched with change sets (Watch, WatchNow: a view's source)
	// the watcher starts writing that version's new files (its manifest,
	// transaction and appended data files) to the device, where FS can
	// (vfs.WritebackStarter; never on an object store): 0 means
	// DefaultWritebackAfter, negative never. See writeback.go.
	WritebackAfter time.Duration
}

// Watcher watches one database directory. See the package comment for
// its concurrency contract.
type Watcher struct {
	opts   Options
	fs     vfs.FS
	log    *slog.Logger
	events chan Event

	mu       sync.Mutex
	requests map[string]watchRequest
	poke     chan struct{}
	running  atomic.Bool

	// Owned by the goroutine in Run.
	tables map[string]*tableState
	wokeAt time.Time // when the current look began (Event.NoticedAt)
	notify *notifier
	dirErr string // last error listing the directory, reported once
	// listedAt is when an object store's database was last listed.
	listedAt time.Time
	// shared: the caller's OpenTable hands out shared handles (source.follow).
	shared bool
	// wb starts the writeback of new versions' files; nil when it cannot.
	wb *writeback
}

type watchRequest struct {
	watch     bool
	from      uint64
	noChanges bool
	// now: from is the latest version when the request was made, and a
	// table already watched keeps its place.
	now bool
}

// New returns a Watcher of opts.Dir; nothing happens until Run.
func New(opts Options) (*Watcher, error) {
	if opts.Dir == "" {
		return nil, errors.New("cdc: no database directory")
	}
	if opts.FS == nil {
		opts.FS = vfs.OS()
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
		if opts.Mode == ModePoll {
			opts.PollInterval = 100 * time.Millisecond
		}
	}
	if opts.DirInterval < opts.PollInterval {
		opts.DirInterval = max(time.Second, opts.PollInterval)
	}
	if opts.ListInterval <= 0 {
		opts.ListInterval = 10 * time.Second
	}
	if opts.Buffer <= 0 {
		opts.Buffer = 64
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	shared := opts.OpenTable != nil
	if !shared {
		fsys := opts.FS
		opts.OpenTable = func(ctx context.Context, root string) (*lance.Table, error) { return lance.Open(ctx, fsys, root) }
	}
	if opts.WritebackAfter == 0 {
		opts.WritebackAfter = DefaultWritebackAfter
	}
	log := opts.Logger.With("component", "cdc")
	var wb *writeback
	if !opts.ObjectStore {
		wb = newWriteback(opts.FS, opts.WritebackAfter, log)
	}
	return &Watcher{
		opts:     opts,
		fs:       opts.FS,
		log:      log,
		wb:       wb,
		events:   make(chan Event, opts.Buffer),
		requests: map[string]watchRequest{},
		poke:     make(chan struct{}, 1),
		tables:   map[string]*tableState{},
		shared:   shared,
	}, nil
}

// Events is the channel of everything the watcher notices. It is closed
// when Run returns.
func (w *Watcher) Events() <-chan Event { return w.events }

// Watch asks for KindVersion events of table for every version after
// from; from == 0 means after the latest version when the watch starts.
// Watch(table, 0) on a watched table changes nothing (no version is
// skipped); a non-zero from restarts it there. The table need not exist
// yet. Safe to call from any goroutine.
func (w *Watcher) Watch(table string, from uint64) {
	w.request(table, watchRequest{watch: true, from: from})
}

// WatchNow is Watch(table, v) with v the table's latest version when
// WatchNow is called (0 if it has none yet), so every version published
// after the call is reported even if the watcher applies the request
// later: a caller that reads the table right after WatchNow (a view's
// catch-up refresh) misses no commit. A table already watched keeps its
// place, as with Watch(table, 0). Safe to call from any goroutine.
func (w *Watcher) WatchNow(ctx context.Context, table string) error {
	var v uint64
	t, err := w.opts.OpenTable(ctx, path.Join(w.opts.Dir, table+lance.TableSuffix))
	if err == nil {
		v, err = t.LatestVersion(ctx)
	}
	if err != nil && !isMissing(err) {
		return fmt.Errorf("cdc: watch %s: %w", table, err)
	}
	w.request(table, watchRequest{watch: true, from: v, now: true})
	return nil
}

// WatchVersions is Watch(table, 0) without change sets: its KindVersion
// events carry no Changes (and no Err for the want of them), which saves
// reading row metadata for a table whose versions matter but whose rows
// do not (a view nobody reads, followed for its metadata). Watch makes
// the change sets come again, from the next version on.
func (w *Watcher) WatchVersions(table string) {
	w.request(table, watchRequest{watch: true, noChanges: true})
}

// Unwatch stops the KindVersion events of table. Safe to call from any
// goroutine.
func (w *Watcher) Unwatch(table string) { w.request(table, watchRequest{}) }

func (w *Watcher) request(table string, r watchRequest) {
	w.mu.Lock()
	w.requests[table] = r
	w.mu.Unlock()
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

// Run watches until ctx is done, then returns ctx.Err(). It fails early
// only when ModeNotify was asked for and fsnotify cannot start. Run may
// be called once.
func (w *Watcher) Run(ctx context.Context) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("cdc: Run called twice")
	}
	defer close(w.events)
	defer w.wb.start(ctx)()
	if w.opts.Mode != ModePoll {
		n, err := newNotifier(w.log)
		if err != nil {
			if w.opts.Mode == ModeNotify {
				return fmt.Errorf("cdc: start fsnotify: %w", err)
			}
			w.log.Warn("fsnotify unavailable, polling instead", "err", err, "interval", w.opts.PollInterval)
		} else {
			w.notify = n
			defer n.close()
			n.add(w.opts.Dir)
		}
	}
	poll := time.NewTicker(w.opts.PollInterval)
	defer poll.Stop()
	list := time.NewTicker(w.opts.ListInterval)
	defer list.Stop()

	w.applyRequests(nil)
	if err := w.scanAll(ctx, true); err != nil {
		return err
	}
	if err := w.emit(ctx, Event{Kind: KindSynced}); err != nil {
		return err
	}
	nev, nerr := w.notify.channels()
	for {
		dirty := map[string]bool{}
		dirDirty, all, full := false, false, false
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.poke:
		case ev, ok := <-nev:
			if !ok {
				nev = nil
				continue
			}
			dirDirty, nev = w.coalesce(ev, nev, dirty)
		case err, ok := <-nerr:
			if !ok {
				nerr = nil
				continue
			}
			// Typically a queue overflow: events were lost, so look at
			// everything.
			w.log.Warn("fsnotify error; rescanning", "err", err)
			full = true
		case <-poll.C:
			all = true
		case <-list.C:
			full = true
		}
		w.wokeAt = time.Now()
		w.applyRequests(dirty)
		if err := w.look(ctx, dirty, dirDirty, all, full); err != nil {
			return err
		}
	}
}

// coalesce classifies ev and whatever else is already queued on nev, so
// that a burst of commits becomes one look at each table. It reports
// whether the directory itself changed, and nev, nil once it is closed.
func (w *Watcher) coalesce(ev fsnotify.Event, nev <-chan fsnotify.Event, dirty map[string]bool) (bool, <-chan fsnotify.Event) {
	dirDirty := w.classify(ev.Name, dirty)
	w.notify.seen(ev)
	for {
		select {
		case ev, ok := <-nev:
			if !ok {
				return dirDirty, nil
			}
			dirDirty = w.classify(ev.Name, dirty) || dirDirty
			w.notify.seen(ev)
		default:
			return dirDirty, nev
		}
	}
}

// look scans what a wake-up asks for: every table with a listing (full),
// every table (all), or the directory (dirDirty) and the dirty tables.
func (w *Watcher) look(ctx context.Context, dirty map[string]bool, dirDirty, all, full bool) error {
	switch {
	case full:
		return w.scanAll(ctx, true)
	case all && w.opts.ObjectStore:
		return w.pollObjects(ctx)
	case all:
		return w.scanAll(ctx, false)
	}
	if dirDirty {
		if err := w.listDir(ctx, dirty); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(dirty) {
		if ts := w.tables[name]; ts != nil {
			if err := w.scanTable(ctx, ts, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// applyRequests moves pending Watch/Unwatch calls into the tables the Run
// goroutine owns, marking the affected tables dirty.
func (w *Watcher) applyRequests(dirty map[string]bool) {
	w.mu.Lock()
	reqs := w.requests
	w.requests = map[string]watchRequest{}
	w.mu.Unlock()
	for name, r := range reqs {
		ts := w.table(name)
		if r.watch {
			if ts.watched && (r.from == 0 || r.now) {
				ts.noChanges = r.noChanges
				continue
			}
			ts.watch(r.from)
			ts.noChanges = r.noChanges
			// Before the look that follows, so no commit goes unnoticed.
			w.notify.add(versionsDir(ts.root))
		} else {
			ts.unwatch()
			w.notify.remove(versionsDir(ts.root))
		}
		if dirty != nil {
			dirty[name] = true
		}
	}
}

// table returns the state of the named table, creating it.
func (w *Watcher) table(name string) *tableState {
	ts := w.tables[name]
	if ts == nil {
		ts = &tableState{name: name, root: path.Join(w.opts.Dir, name+lance.TableSuffix)}
		w.tables[name] = ts
	}
	return ts
}

// classify marks the table an fsnotify event path belongs to; it reports
// whether the database directory's own entries changed.
func (w *Watcher) classify(name string, dirty map[string]bool) bool {
	rel, ok := strings.CutPrefix(name, w.opts.Dir+"/")
	if !ok {
		return false
	}
	first, rest, _ := strings.Cut(rel, "/")
	table, ok := strings.CutSuffix(first, lance.TableSuffix)
	if !ok || table == "" {
		return false
	}
	dirty[table] = true
	return rest == ""
}

// scanAll lists the directory and looks at every table; full also lists
// the versions of watched tables.
func (w *Watcher) scanAll(ctx context.Context, full bool) error {
	if err := w.listDir(ctx, nil); err != nil {
		return err
	}
	for _, name := range sortedKeys(w.tables) {
		if err := w.scanTable(ctx, w.tables[name], full); err != nil {
			return err
		}
	}
	return nil
}

// listDir reads the database directory: new names get a state (and are
// marked dirty), names gone are scanned so their drop is reported.
func (w *Watcher) listDir(ctx context.Context, dirty map[string]bool) error {
	w.listedAt = time.Now()
	names, err := w.fs.ReadDir(w.opts.Dir)
	if err != nil && w.opts.ObjectStore && errors.Is(err, fs.ErrNotExist) {
		names, err = nil, nil // nothing under the prefix yet: no tables
	}
	if err != nil {
		err = fmt.Errorf("list database directory %s: %w", w.opts.Dir, err)
		if err.Error() == w.dirErr {
			return nil
		}
		w.dirErr = err.Error()
		return w.emitErr(ctx, nil, 0, err)
	}
	w.dirErr = ""
	here := map[string]bool{}
	for _, n := range names {
		if t, ok := strings.CutSuffix(n, lance.TableSuffix); ok && t != "" && !strings.HasPrefix(t, ".") {
			here[t] = true
			if _, known := w.tables[t]; !known {
				w.table(t)
				if dirty != nil {
					dirty[t] = true
				}
			}
		}
	}
	for name, ts := range w.tables {
		if !here[name] {
			if ts.present && dirty != nil {
				dirty[name] = true
			}
			if !ts.present && !ts.watched {
				delete(w.tables, name)
			}
		}
	}
	return nil
}

// emit delivers ev, blocking until it is received or ctx is done.
func (w *Watcher) emit(ctx context.Context, ev Event) error {
	select {
	case w.events <- ev:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// emitErr reports a problem once: the same message for the same table is
// not repeated until something succeeds in between.
func (w *Watcher) emitErr(ctx context.Context, ts *tableState, version uint64, err error) error {
	if ts != nil {
		err = fmt.Errorf("watch table %s: %w", ts.name, err)
	}
	ev := Event{Kind: KindError, To: version, Err: err}
	key := err.Error()
	if ts != nil {
		ev.Table, ev.Incarnation = ts.name, ts.incarnation
		if ts.lastErr == key {
			return nil
		}
		ts.lastErr = key
	}
	w.log.Warn("table problem", "table", ev.Table, "version", version, "err", err)
	return w.emit(ctx, ev)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
