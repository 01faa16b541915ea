package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mvd-project/mvd/cdc"
	"github.com/mvd-project/mvd/cluster"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/serveinfo"
	"github.com/mvd-project/mvd/stream"
	"github.com/mvd-project/mvd/vfs"
)

// Deps are what the serve process is wired to. Every field is optional:
// without a Catalog no view is refreshed (the watcher and admin server
// still run); without a Bus nothing is published and readiness does not
// wait for NATS.
type Deps struct {
	Catalog Catalog
	Bus     Bus
	// IsConflict recognizes matview's conflict error.
	IsConflict func(error) bool
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Metrics defaults to NewMetrics().
	Metrics *Metrics
	// Close, if set, is called by Command after the server has stopped
	// (every owner drained): it closes what DepsFunc opened.
	Close func() error
	// Lock, if set, is the state directory's lock, already held (Command
	// takes it before DepsFunc opens anything); Run releases it.
	Lock *serveinfo.Lock
	// History, if set, records every refresh attempt (package checkpoint
	// provides it over Badger).
	History History
	// Changes, if set, reads change sets and commit times from the
	// source tables (republished change sets, lag, staleness).
	Changes ChangeSource
	// API, if set, is the control API, served under /v1/ on the admin
	// listener (package control/httpapi over the database); routes the
	// daemon serves itself under /v1/ take precedence.
	API http.Handler
	// Jobs, if set, keeps the refresh jobs' history (package checkpoint
	// provides it); without it jobs are kept in memory only.
	Jobs JobStore
	// JobHold, if set, runs when a refresh job starts, before its
	// refresh, and the refresh waits for it (or for the job's cancel):
	// tests keep a job in flight with it. `mvd serve` sets it only from
	// MVD_TEST_JOB_HOLD.
	JobHold func(ctx context.Context) error
	// FS and Dir, if set, are where the watcher reads the tables: an
	// s3:// database's bucket and prefix. Default: the local disk at
	// Config.DB.
	FS  vfs.FS
	Dir string
	// OpenTable, if set, opens the watcher's tables (cdc.Options.OpenTable):
	// package wire returns the database's shared handles, so that a
	// source's new version is read and decoded once per commit, by the
	// watcher, and the views' refreshes find it decoded. Default:
	// lance.Open.
	OpenTable func(ctx context.Context, root string) (*lance.Table, error)
}

// Server is one `mvd serve`: lock, admin HTTP, bus, serve.json, watcher
// and one owner per view.
type Server struct {
	cfg     Config
	deps    Deps
	log     *slog.Logger
	metrics *Metrics

	started chan struct{}
	info    atomic.Pointer[serveinfo.Info]
	busUp   atomic.Bool
	synced  atomic.Bool

	mu     sync.Mutex
	owners map[string]*ownerHandle
	// retiring has, per view name, a channel closed once the owner last
	// stopped under that name has drained (and its feed is deleted if the
	// view was dropped); drains tracks those goroutines.
	retiring map[string]chan struct{}
	drains   sync.WaitGroup

	watched map[string]bool   // tables the watcher follows → with change sets (a view reads it); event loop only
	incs    map[string]string // table -> incarnation last seen; under mu
	specs   []ViewSpec        // the views as last listed; event loop only

	// clu is the membership when the database is shared with other
	// instances (set once in Run, before the watcher starts); nil alone.
	clu         atomic.Pointer[cluster.Cluster]
	clusterKick chan struct{}

	pub     *publisher             // nil without a Bus; its backlog goroutine runs in Run
	outbox  atomic.Pointer[outbox] // nil without a Bus; its retry goroutine runs in Run
	history *historyWriter         // nil without a History; its goroutine runs in Run

	unreadable *unreadableViews // views listed that cannot be read

	jobs *jobService
}

type ownerHandle struct {
	spec   ViewSpec
	owner  *viewOwner
	feed   *feedRunner // nil without a FeedBus
	cancel context.CancelFunc
	done   chan struct{}
}

// fed reports whether the owner gets its wake-ups from its feed now.
func (h *ownerHandle) fed() bool { return h.feed != nil && h.feed.isUp() }

// NewServer returns a server for a validated configuration.
func NewServer(cfg Config, deps Deps) *Server {
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	if deps.Metrics == nil {
		deps.Metrics = newMetrics()
	}
	s := &Server{
		cfg: cfg, deps: deps, log: deps.Logger, metrics: deps.Metrics,
		started: make(chan struct{}),

		clusterKick: make(chan struct{}, 1),
		owners:      map[string]*ownerHandle{},
		retiring:    map[string]chan struct{}{},
		watched:     map[string]bool{},
		incs:        map[string]string{},

		unreadable: newUnreadableViews(deps.Logger, deps.Metrics.Registry),
		jobs:       newJobService(deps.Jobs, deps.Logger),
	}
	s.jobs.hold, s.jobs.instance = deps.JobHold, cfg.InstanceID
	if a, ok := deps.API.(jobsSetter); ok {
		a.SetJobs(controlJobs{s})
	}
	s.metrics.SetStaleness(s.staleness)
	return s
}

// Started is closed once the server holds its lock, listens and has
// written serve.json; Info is then valid.
func (s *Server) Started() <-chan struct{} { return s.started }

// Info is what serve.json says (after Started).
func (s *Server) Info() serveinfo.Info {
	if p := s.info.Load(); p != nil {
		return *p
	}
	return serveinfo.Info{}
}

// Metrics returns the server's metrics.
func (s *Server) Metrics() *Metrics { return s.metrics }

// Ready reports readiness: the bus is up, the watcher has looked at the
// whole database once, and every view has been checked once.
func (s *Server) Ready() (bool, string) {
	if s.deps.Bus != nil && !s.busUp.Load() {
		return false, "NATS is not up yet"
	}
	if !s.synced.Load() {
		return false, "first look at the database not finished"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var waiting []string
	for name, h := range s.owners {
		if !h.owner.Checked() {
			waiting = append(waiting, name)
		}
	}
	if len(waiting) > 0 {
		sort.Strings(waiting)
		return false, "views not checked yet: " + strings.Join(waiting, ", ")
	}
	return true, ""
}

// Run serves until drain is done, then drains: no new refresh starts,
// refreshes in flight finish, serve.json is removed and the lock
// released. Cancelling hard as well stops refreshes in flight (safe: view
// commits are atomic). A start-up failure (locked, port busy, NATS down)
// is returned at once.
func (s *Server) Run(drain, hard context.Context) (err error) {
	lock := s.deps.Lock
	if lock == nil {
		if lock, err = serveinfo.AcquireLock(s.cfg.StateDir); err != nil {
			return err
		}
	}
	defer func() {
		if rerr := lock.Release(); rerr != nil && err == nil {
			err = rerr
		}
	}()
	if err := s.jobs.load(drain); err != nil {
		s.log.Warn("refresh job history unreadable; starting without it", "err", err)
	}
	admin, err := listenAdminDefault(s.cfg.AdminAddr, s.cfg.AdminToken, s.metrics, s.Ready, s.log, append(s.jobRoutes(), append(s.adminRoutes(), s.clusterRoute())...)...)
	if err != nil {
		return err
	}
	adminDone := make(chan error, 1)
	go func() { adminDone <- admin.Serve() }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = admin.Shutdown(ctx)
		<-adminDone
	}()
	info := serveinfo.Info{AdminAddr: admin.Addr(), PID: os.Getpid(), DB: s.cfg.DB, StartedAt: time.Now().UTC(), SubjectPrefix: s.cfg.SubjectPrefix, InstanceID: s.cfg.InstanceID}
	if s.deps.Bus != nil {
		url, token, err := s.deps.Bus.Start(drain)
		if err != nil {
			return fmt.Errorf("start NATS: %w", err)
		}
		defer s.deps.Bus.Close()
		info.NATSURL, info.Token = url, token
		s.busUp.Store(true)
	}
	leave, err := s.joinCluster(drain, info.AdminAddr)
	if err != nil {
		return err
	}
	defer leave() // after the owners drained (s.watch)
	defer s.startBackground()()
	if err := serveinfo.Write(s.cfg.StateDir, info); err != nil {
		return err
	}
	defer func() {
		if rerr := serveinfo.Remove(s.cfg.StateDir); rerr != nil && err == nil {
			err = rerr
		}
	}()
	s.info.Store(&info)
	close(s.started)
	s.log.Info("serving", "db", s.cfg.DB, "admin", info.AdminAddr, "nats", stream.RedactURL(info.NATSURL), "state_dir", s.cfg.StateDir, "watch", s.cfg.WatchMode().String(), "poll_interval", s.cfg.PollInterval)
	return s.watch(drain, hard)
}

// watch runs the watcher and acts on its events until drain is done (or
// the watcher fails), then drains every owner.
func (s *Server) watch(drain, hard context.Context) (err error) {
	dir := s.cfg.DB
	if s.deps.Dir != "" {
		dir = s.deps.Dir
	}
	w, err := cdc.New(cdc.Options{FS: s.deps.FS, Dir: dir, Mode: s.cfg.WatchMode(), PollInterval: s.cfg.PollInterval, ObjectStore: s.cfg.Remote(), Logger: s.log, OpenTable: s.deps.OpenTable, WritebackAfter: s.cfg.WritebackAfter()})
	if err != nil {
		return err
	}
	wctx, wcancel := context.WithCancel(drain)
	watchDone := make(chan error, 1)
	go func() { watchDone <- w.Run(wctx) }()
	defer func() {
		wcancel()
		for range w.Events() { // let Run finish a blocked send
		}
		if werr := <-watchDone; werr != nil && !errors.Is(werr, context.Canceled) && err == nil {
			err = werr
		}
	}()
	defer s.stopOwners()
	var refollow <-chan time.Time
	if s.clu.Load() != nil {
		// Sources of owned views whose feed is down are watched here
		// (see follow): looked at again every second.
		t := time.NewTicker(time.Second)
		defer t.Stop()
		refollow = t.C
	}
	for {
		select {
		case <-s.clusterKick:
			if s.synced.Load() {
				s.applyViews(drain, hard, w)
			}
		case <-refollow:
			if s.synced.Load() {
				s.follow(drain, w, s.specs)
			}
		case <-drain.Done():
			s.log.Info("draining: no new refreshes; waiting for those in flight (signal again to stop at once)")
			return nil
		case ev, ok := <-w.Events():
			if !ok {
				if werr := <-watchDone; werr != nil && !errors.Is(werr, context.Canceled) {
					watchDone <- nil
					return fmt.Errorf("watcher: %w", werr)
				}
				watchDone <- nil
				return nil
			}
			s.handle(drain, hard, w, ev)
		}
	}
}

// incarnation is the incarnation of table as last seen.
func (s *Server) incarnation(table string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.incs[table]
}

// handle acts on one watcher event.
func (s *Server) handle(ctx, hard context.Context, w *cdc.Watcher, ev cdc.Event) {
	if ev.Incarnation != "" {
		s.mu.Lock()
		s.incs[ev.Table] = ev.Incarnation
		s.mu.Unlock()
	}
	switch ev.Kind {
	case cdc.KindSynced:
		s.syncViews(ctx, hard, w)
		s.synced.Store(true)
	case cdc.KindAdded, cdc.KindRecreated:
		if s.synced.Load() {
			// A view created again under the same name is another view:
			// its owner (and the warm state of its refresher) starts over.
			s.stopOwner(ev.Table)
			s.syncViews(ctx, hard, w)
		}
		// A view failing on its missing source retries now, not after
		// its backoff (up to 30 s).
		s.wakeDependents(ev.Table, wakeUp{SourceVersion: ev.To, Full: ev.Kind == cdc.KindRecreated, Retry: true})
	case cdc.KindDropped:
		s.mu.Lock()
		delete(s.incs, ev.Table)
		s.mu.Unlock()
		s.metrics.ForgetSource(ev.Table)
		s.syncViews(ctx, hard, w)
		s.wakeDependents(ev.Table, wakeUp{}) // their refresh reports the missing source
	case cdc.KindVersion:
		// Publish, then let each view's durable feed deliver the change
		// set to its owner (one daemon among those sharing the feed).
		// Owners whose feed is down, and all of them if the change set
		// could not be published, are woken directly: views stay fresh
		// without NATS, and the bus republishes what it missed once NATS
		// is back. A version without a change set (ev.Err) is published
		// without row ids: its refresh computes the step from the source.
		if !s.isSource(ev.Table) {
			// A view's own commit (a refresh, usually this daemon's),
			// watched only for policy changes: no view reads it, so its
			// change set is nobody's news.
			s.recheckView(ctx, ev.Table, ev.To, ev.Operation)
			return
		}
		published, leads := false, s.leads(ev.Table)
		if s.pub != nil && leads {
			if err := s.pub.publish(ctx, ev); err != nil {
				s.log.Debug("publish change set; waking views directly", "source", ev.Table, "from", ev.From, "to", ev.To, "err", err)
			} else {
				published = true
				if s.log.Enabled(ctx, slog.LevelDebug) {
					// The first stages of a commit's trace (see
					// bench/freshness_test.go): commit, noticed, published.
					s.log.Debug("change set published", "source", ev.Table, "to", ev.To, "op", ev.Operation,
						"committed_at", ev.CommittedAt, "noticed_at", ev.NoticedAt, "published_at", time.Now())
				}
			}
		}
		// A source another instance publishes is watched here only for
		// the owners whose feed is down.
		s.wakeUnfed(ev.Table, published || !leads, wakeUp{SourceVersion: ev.To, CommittedAt: ev.CommittedAt})
		s.metrics.SourceVersion(ev.Table, ev.To, ev.Changes)
		s.recheckView(ctx, ev.Table, ev.To, ev.Operation)
	case cdc.KindError:
		// Logged by the watcher; dependents keep their last state.
	}
}

// wakeDependents wakes every view that reads table.
func (s *Server) wakeDependents(table string, wk wakeUp) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range s.owners {
		if h.spec.Source == table {
			h.owner.Notify(wk)
		}
	}
}

// wakeUnfed wakes the views over table that will not hear of a version
// from their feed: all of them if it was not published, else those whose
// feed is down.
func (s *Server) wakeUnfed(table string, published bool, wk wakeUp) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range s.owners {
		if h.spec.Source == table && (!published || !h.fed()) {
			h.owner.Notify(wk)
		}
	}
}

// isSource reports whether some served view reads table, or this
// instance publishes its change sets for the other instances' views.
func (s *Server) isSource(table string) bool {
	if cl := s.clu.Load(); cl != nil && cl.Holds(cluster.KindSource, table) {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range s.owners {
		if h.spec.Source == table {
			return true
		}
	}
	return false
}

// recheckView picks up a policy change of a view whose table committed
// version: an alter, or anything else that may rewrite its metadata. A
// commit that only adds or removes rows (a refresh, by this daemon or
// another refresher, whose metadata keeps the policy) is not looked at:
// re-reading the view after every refresh would cost a manifest read each.
func (s *Server) recheckView(ctx context.Context, table string, version uint64, op string) {
	s.mu.Lock()
	h := s.owners[table]
	s.mu.Unlock()
	if h == nil {
		return
	}
	h.owner.ViewCommitted(version)
	if s.deps.Catalog == nil || h.owner.Committed() == version || rowsOnly(op) {
		return
	}
	spec, ok, err := s.deps.Catalog.View(ctx, table)
	if err != nil || !ok {
		return // a dropped view is noticed by its KindDropped
	}
	if spec.Policy != h.owner.Policy() {
		s.log.Info("view policy changed", "view", table, "policy", spec.Policy.Mode.String())
		h.owner.SetPolicy(spec.Policy)
	}
}

// rowsOnly reports whether a Lance operation changes rows only (never a
// table's schema metadata, where a view's policy lives).
func rowsOnly(op string) bool {
	switch lance.Operation(op) {
	case lance.OpAppend, lance.OpDelete, lance.OpUpdate, lance.OpRewrite, lance.OpCreateIndex, lance.OpReserveFragments:
		return true
	}
	return false
}

// syncViews starts owners for new views, stops those of views gone, and
// keeps the watch set to the views and their sources.
func (s *Server) syncViews(ctx, hard context.Context, w *cdc.Watcher) {
	if s.deps.Catalog == nil {
		return
	}
	specs, err := s.deps.Catalog.Views(ctx)
	if err != nil {
		s.log.Warn("list views", "err", err)
		return
	}
	s.specs = s.unreadable.note(specs)
	s.offer(s.specs)
	s.applyViews(ctx, hard, w)
}

// applyViews runs an owner for each view listed that this instance owns
// (all of them alone; those whose lease it holds when clustered), stops
// the others' owners, and keeps the watch set to the views and their
// sources.
func (s *Server) applyViews(ctx, hard context.Context, w *cdc.Watcher) {
	specs := s.specs
	want := map[string]ViewSpec{}
	for _, sp := range specs {
		want[sp.Name] = sp
	}
	s.mu.Lock()
	for name, h := range s.owners {
		if sp, ok := want[name]; !ok || sp.Source != h.spec.Source || !s.owns(name) {
			delete(s.owners, name)
			_, kept := want[name]
			s.retireLocked(h, !kept)
		}
	}
	s.mu.Unlock()
	s.follow(ctx, w, specs)
	for _, sp := range specs {
		if !s.owns(sp.Name) {
			continue
		}
		s.mu.Lock()
		h := s.owners[sp.Name]
		s.mu.Unlock()
		if h != nil {
			if sp.Policy != h.owner.Policy() {
				h.owner.SetPolicy(sp.Policy)
			}
			continue
		}
		if err := sp.Policy.Validate(); err != nil {
			s.log.Warn("view has an invalid auto-refresh policy; treating it as manual", "view", sp.Name, "err", err)
			sp.Policy = matview.Policy{Mode: matview.Manual}
		}
		r, err := s.deps.Catalog.Open(ctx, sp.Name)
		if err != nil {
			s.log.Warn("open view", "view", sp.Name, "err", err)
			continue
		}
		s.startOwner(hard, sp, r)
	}
}

// follow has the watcher follow the views (a commit of one is a policy
// change, or news for the views over it) and their sources, and stop
// following the rest. A view nobody reads is followed without change
// sets: computing one per refresh commit would cost a walk of its
// fragments for nothing. The watches start before the owners: a new
// owner's catch-up refresh reads its source after WatchNow took the
// source's latest version, so a commit landing between the two is
// reported, not lost.
func (s *Server) follow(ctx context.Context, w *cdc.Watcher, specs []ViewSpec) {
	watched := s.toWatch(specs)
	for name, changes := range watched {
		was, ok := s.watched[name]
		if ok && was == changes {
			continue
		}
		if changes {
			if err := w.WatchNow(ctx, name); err != nil {
				s.log.Warn("watch table", "table", name, "err", err)
				w.Watch(name, 0)
			}
			if s.clu.Load() != nil && !was {
				s.catchUpSource(ctx, name)
			}
		} else {
			w.WatchVersions(name)
			if !ok && s.clu.Load() != nil {
				// A source watched for owners whose feed is down: what
				// was committed since the feed went down is caught up
				// from the source now.
				s.wakeDependents(name, wakeUp{})
			}
		}
	}
	for name := range s.watched {
		if _, ok := watched[name]; !ok {
			w.Unwatch(name)
		}
	}
	s.watched = watched
}
