package daemon

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/mvd-project/mvd/matview"
)

// wakeUp tells a view's owner that its source has news.
type wakeUp struct {
	// SourceVersion is the newest source version known to the sender.
	SourceVersion uint64
	// CommittedAt is that version's commit time (zero if unknown): lag
	// is measured from the oldest commit a refresh reflects.
	CommittedAt time.Time
	// Full asks for a rebuild (the source was recreated, or its change
	// set could not be computed).
	Full bool
	// Retry says what a failing refresh may have failed on changed (its
	// source appeared again): the retry runs now, not after the backoff.
	Retry bool
}

// ownerConfig configures an Owner.
type ownerConfig struct {
	// View is the view's name (for logs and metrics).
	View string
	// Refresher refreshes the view; if it is also a Maintainer, its
	// Maintain runs between refreshes.
	Refresher Refresher
	// Reopen, if set, opens the view again: a refresh that failed with
	// vfs.ErrNotDurable poisons the handle that made it, so the retry
	// runs on a new one.
	Reopen func(ctx context.Context) (Refresher, error)
	// Policy is the initial auto-refresh policy (SetPolicy changes it).
	Policy matview.Policy
	// CatchUp refreshes once at start (unless the policy is Manual): a
	// view behind its source is brought up to date at once.
	CatchUp bool
	// HoldUntil, if set, is when the owner may first refresh: a view
	// another writer just created is left to its creator's first refresh
	// until then.
	HoldUntil time.Time
	// Metrics, if set, receive refresh durations, rows, lag and errors.
	Metrics *Metrics
	// Logger receives the owner's logs (default slog.Default()).
	Logger *slog.Logger
	// IsConflict reports whether a refresh error means another refresher
	// already did the work (matview.ErrConflict): counted, not retried.
	IsConflict func(error) bool
	// RefreshContext is the context refreshes run under. It is separate
	// from Run's: cancelling Run's context drains (the refresh in flight
	// finishes, then Run returns); cancelling this one stops the refresh
	// in flight too, which is safe because a view commit is atomic.
	// Default: context.Background().
	RefreshContext context.Context
	// OnRefresh, if set, is called after every refresh attempt (for
	// notifications and history). It runs on the owner's goroutine.
	OnRefresh func(Outcome)
	// MinBackoff and MaxBackoff bound the wait after failed refreshes
	// (defaults 100ms and 30s), growing exponentially with jitter; no
	// wait exceeds MaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// Incarnation, if set, returns the source's incarnation as the
	// watcher last saw it: deliveries of another incarnation are not
	// applied as change sets (the refresh computes from the source).
	Incarnation func() string
	// AckTimeout bounds acks and naks of deliveries (default 5s).
	AckTimeout time.Duration
	// clock is the owner's time (default: the wall clock; tests set it).
	clock clock
	// jobs, if set, is the daemon's job service: the owner runs the jobs
	// submitted to it (submitJob) between its own refreshes.
	jobs *jobService
}

// viewOwner is the one goroutine that refreshes one view; it runs the
// view's maintenance steps one at a time in a goroutine beside it
// (maintenance.go). Notify, SetPolicy, ViewCommitted and Checked may be
// called from any goroutine; Run from one.
type viewOwner struct {
	cfg   ownerConfig
	log   *slog.Logger
	clock clock
	wake  chan struct{}

	mu      sync.Mutex
	policy  matview.Policy
	pending pendingWork
	queued  []*ownerJob // refresh jobs, in submission order
	stopped bool        // Run has returned: jobs are not queued any more

	checked atomic.Bool
	// committed is the view version this owner's last refresh produced:
	// the daemon need not re-read the view's policy for its own commit.
	committed atomic.Uint64
	// seen is the newest view version the daemon saw committed
	// (ViewCommitted); moved is set by failed or conflicting refreshes.
	// Either seen > committed or moved means the last refresh's
	// watermark is no longer known to be the view's.
	seen  atomic.Uint64
	moved atomic.Bool
	// inFlight is set while a refresh runs, maintInFlight while a
	// maintenance step does: a view commit seen meanwhile may be their
	// own, so it is judged when they end.
	inFlight, maintInFlight atomic.Bool
	// foreignWoken is the newest foreign view version a wake-up was made
	// for.
	foreignWoken atomic.Uint64

	settles settles

	// Owned by Run.
	r         Refresher
	reopen    bool // the next attempt reopens the view first
	sched     schedule
	burst     burst
	failures  int    // failed attempts in a row
	lastErr   string // the last failure's text ("" after a success)
	backoff   *backoff.ExponentialBackOff
	reflected uint64 // source version after the last successful refresh
	// maintainAt is when the next maintenance step is due without a
	// refresh before it (zero: after the next refresh).
	maintainAt time.Time
	// maintRunning is set while a maintenance step runs (maintenance.go);
	// maintWanted asks for another right after it. The step's goroutine
	// hands its result back on maintDone (capacity 1); maintWG lets Run
	// wait for it.
	maintRunning, maintWanted bool
	maintDone                 chan maintResult
	maintWG                   sync.WaitGroup
}

// pendingWork is the coalesced backlog: however many wake-ups arrived,
// one refresh serves them all.
type pendingWork struct {
	has          bool
	version      uint64
	firstAt      time.Time // first wake-up of the batch (debounce)
	oldestCommit time.Time // oldest source commit not yet reflected (lag)
	full         bool
	retry        bool // wakeUp.Retry: skip the backoff once
	// delivery is the change sets of the view's feed this work covers
	// (at most one outstanding: the feed waits for it to be settled).
	delivery *settled
}

func (p *pendingWork) merge(w wakeUp, now time.Time) {
	if !p.has {
		p.has, p.firstAt = true, now
	}
	p.version = max(p.version, w.SourceVersion)
	if !w.CommittedAt.IsZero() && (p.oldestCommit.IsZero() || w.CommittedAt.Before(p.oldestCommit)) {
		p.oldestCommit = w.CommittedAt
	}
	p.full = p.full || w.Full
	p.retry = p.retry || w.Retry
}

// newOwner returns an owner; nothing runs until Run.
func newOwner(cfg ownerConfig) *viewOwner {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.IsConflict == nil {
		cfg.IsConflict = func(error) bool { return false }
	}
	if cfg.RefreshContext == nil {
		cfg.RefreshContext = context.Background()
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = 100 * time.Millisecond
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 30 * time.Second
	}
	if cfg.Incarnation == nil {
		cfg.Incarnation = func() string { return "" }
	}
	if cfg.AckTimeout <= 0 {
		cfg.AckTimeout = 5 * time.Second
	}
	if cfg.clock == nil {
		cfg.clock = realClock{}
	}
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval = cfg.MinBackoff, cfg.MaxBackoff
	o := &viewOwner{
		cfg:       cfg,
		log:       cfg.Logger.With("view", cfg.View),
		clock:     cfg.clock,
		wake:      make(chan struct{}, 1),
		maintDone: make(chan maintResult, 1),
		policy:    cfg.Policy,
		r:         cfg.Refresher,
		backoff:   b,
		sched:     schedule{holdUntil: cfg.HoldUntil},
	}
	o.settles.init(o.log, cfg.AckTimeout)
	if cfg.CatchUp && cfg.Policy.Mode != matview.Manual {
		o.pending.merge(wakeUp{}, cfg.clock.Now())
		o.pending.firstAt = time.Time{} // no debounce for the catch-up
	}
	return o
}

// Notify hands the owner a wake-up; it never blocks. Wake-ups that
// arrive while a refresh runs are coalesced into the next one.
func (o *viewOwner) Notify(w wakeUp) {
	o.mu.Lock()
	o.pending.merge(w, o.clock.Now())
	o.mu.Unlock()
	o.poke()
}

// deliver hands the owner a delivery of its feed: a wake-up for its
// newest version that carries its change sets. Under Manual it is acked
// at once and only the wake-up is kept (the refresh that serves it
// computes from the source).
func (o *viewOwner) deliver(d *settled) {
	w := wakeUp{SourceVersion: d.MaxTo(), CommittedAt: d.OldestCommit()}
	o.mu.Lock()
	o.pending.merge(w, o.clock.Now())
	var spent *settled
	if o.policy.Mode == matview.Manual {
		// Remembered without its change sets: a switch back to an
		// automatic policy catches up from the source instead of
		// waiting for the next commit.
		spent = d
	} else {
		spent, o.pending.delivery = o.pending.delivery, d // one feed: never two outstanding
	}
	o.mu.Unlock()
	o.settles.ack(spent)
	o.poke()
}

// SetPolicy changes the view's policy (the view was altered). A switch to
// Manual acks the delivery waiting, if any: the feed must not wait for a
// refresh that will not come.
func (o *viewOwner) SetPolicy(p matview.Policy) {
	o.mu.Lock()
	o.policy = p
	var spent *settled
	if p.Mode == matview.Manual {
		spent, o.pending.delivery = o.pending.delivery, nil
	}
	o.mu.Unlock()
	o.settles.ack(spent)
	o.poke()
}

// Policy returns the current policy.
func (o *viewOwner) Policy() matview.Policy {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.policy
}

// Checked reports whether the view has been looked at once: its catch-up
// refresh attempt finished, or it needs none (Manual, or no CatchUp).
func (o *viewOwner) Checked() bool { return o.checked.Load() }

// Committed is the view version the owner's last successful refresh
// left the view at (0 before the first).
func (o *viewOwner) Committed() uint64 { return o.committed.Load() }

// ViewCommitted tells the owner that the view has version v (the
// watcher saw it). A version newer than the owner's own last commit was
// made by someone else (another refresher, a refresh by hand to an old
// source version, a restore, an alter): the next refresh asks the view
// for its watermark instead of trusting its own last refresh's, and the
// view's policy is applied to it at once (a wake-up), not at the next
// source commit.
func (o *viewOwner) ViewCommitted(v uint64) {
	for {
		old := o.seen.Load()
		if v <= old {
			return
		}
		if o.seen.CompareAndSwap(old, v) {
			break
		}
	}
	if !o.inFlight.Load() {
		o.checkForeign()
	}
}

// checkForeign wakes the owner if the view has a commit newer than its
// own last one, once per such version (a refresh that leaves the view
// where it is must not wake it again). While a maintenance step runs, the
// version right after the owner's last commit may be the step's own
// compaction: that one is judged when the step ends, which checks again.
func (o *viewOwner) checkForeign() {
	c, seen := o.committed.Load(), o.seen.Load()
	if c == 0 || seen <= c {
		return
	}
	if seen == c+1 && o.maintInFlight.Load() {
		return
	}
	for {
		woken := o.foreignWoken.Load()
		if seen <= woken {
			return
		}
		if o.foreignWoken.CompareAndSwap(woken, seen) {
			o.Notify(wakeUp{})
			return
		}
	}
}

func (o *viewOwner) poke() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// Run refreshes the view as its policy says until ctx is done; a refresh
// in flight then finishes (see OwnerConfig.RefreshContext) before Run
// returns, and so do the acks of deliveries under way.
func (o *viewOwner) Run(ctx context.Context) {
	stopSettles := context.AfterFunc(ctx, o.settles.stop)
	defer o.abandonJobs()
	defer o.awaitMaintenance()
	defer func() {
		stopSettles()
		o.settles.stop()
		o.settles.wait()
	}()
	if o.Policy().Mode == matview.Manual || !o.cfg.CatchUp {
		o.checked.Store(true) // nothing to look at before the first wake-up
	}
	for {
		if ctx.Err() != nil || o.cfg.RefreshContext.Err() != nil {
			return
		}
		o.collectMaintenance()
		if j := o.takeJob(); j != nil {
			o.runJob(j)
			continue
		}
		now := o.clock.Now()
		work, wait := o.take(now)
		if work.has {
			o.refresh(work)
			continue
		}
		due, mwait := o.maintenanceWait(now)
		if due {
			o.maintain()
			continue
		}
		if mwait > 0 && (wait == 0 || mwait < wait) {
			wait = mwait
		}
		var timer <-chan time.Time
		stop := func() bool { return false }
		if wait > 0 {
			timer, stop = o.clock.After(wait)
		}
		select {
		case <-ctx.Done():
		case <-o.wake:
		case <-timer:
		}
		stop()
	}
}

// take takes the pending work if it is due now; otherwise it says how
// long until it is (0: nothing to wait for).
func (o *viewOwner) take(now time.Time) (pendingWork, time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ok, wait := due(o.pending, o.policy, o.sched, o.burst.until(o.policy), now)
	if !ok {
		return pendingWork{}, wait
	}
	p := o.pending
	o.pending = pendingWork{}
	return p, 0
}

// schedule is what, besides the policy, decides when work is due.
type schedule struct {
	lastStart time.Time // the last refresh's start (interval)
	retryAt   time.Time // after a failure: the backoff's end
	holdUntil time.Time // a view just created by another writer
}

// due reports whether pending work p is due at now under policy pol,
// schedule s and a burst wait until burstUntil; if not, how long until it
// is (0: never by itself, the next wake-up or policy change decides).
func due(p pendingWork, pol matview.Policy, s schedule, burstUntil, now time.Time) (bool, time.Duration) {
	if !p.has || pol.Mode == matview.Manual {
		return false, 0 // a manual view's backlog waits for a switch back
	}
	earliest := now
	if pol.Debounce > 0 && !p.firstAt.IsZero() {
		earliest = later(earliest, p.firstAt.Add(pol.Debounce))
	}
	if pol.Mode == matview.Interval && !s.lastStart.IsZero() {
		earliest = later(earliest, s.lastStart.Add(pol.Interval))
	}
	if !p.retry {
		earliest = later(earliest, s.retryAt)
	}
	earliest = later(later(earliest, burstUntil), s.holdUntil)
	if earliest.After(now) {
		return false, earliest.Sub(now)
	}
	return true, 0
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
