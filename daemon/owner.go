package daemon

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// Wake tells a view's owner that its source has news.
type Wake struct {
	// SourceVersion is the newest source version known to the sender.
	SourceVersion uint64
	// CommittedAt is that version's commit time (zero if unknown): lag
	// is measured from the oldest commit a refresh reflects.
	CommittedAt time.Time
	// Full asks for a rebuild (the source was recreated, or its change
	// set could not be computed).
	Full bool
	// Explicit is a refresh asked for by a user or the control API: it
	// runs under every policy (Manual too), without debounce or interval.
	Explicit bool
	// Retry says what a failing refresh may have failed on changed (its
	// source appeared again): the retry runs now, not after the backoff.
	Retry bool
}

// OwnerConfig configures an Owner.
type OwnerConfig struct {
	// View is the view's name (for logs and metrics).
	View string
	// Refresher refreshes the view; if it is also a Maintainer, its
	// Maintain runs between refreshes.
	Refresher Refresher
	// Policy is the initial auto-refresh policy (SetPolicy changes it).
	Policy Policy
	// CatchUp refreshes once at start (unless the policy is Manual): a
	// view behind its source is brought up to date at once.
	CatchUp bool
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
	// (defaults 100ms and 30s), growing exponentially with jitter.
	MinBackoff, MaxBackoff time.Duration
	// Incarnation, if set, returns the source's incarnation as the
	// watcher last saw it: deliveries of another incarnation are not
	// applied as change sets (the refresh computes from the source).
	Incarnation func() string
	// AckTimeout bounds acks and naks of deliveries (default 5s).
	AckTimeout time.Duration
}

// Owner is the one goroutine that refreshes (and maintains) one view.
// Notify, SetPolicy and Checked may be called from any goroutine; Run
// from one.
type Owner struct {
	cfg  OwnerConfig
	log  *slog.Logger
	wake chan struct{}

	mu      sync.Mutex
	policy  Policy
	pending pendingWork

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
	// acks are the deliveries being acked off the refresh path; Run
	// waits for them before it returns (stopped tells them to give up).
	acks    sync.WaitGroup
	stopped <-chan struct{}

	// Owned by Run.
	lastStart time.Time
	retryAt   time.Time
	failures  int
	backoff   *backoff.ExponentialBackOff
	reflected uint64 // source version after the last successful refresh
	// Burst coalescing: while source commits come much faster than
	// refreshes finish (bursting), the next refresh waits a little (a
	// few times the last refresh's duration, at most maxBurstWait) to
	// take more of them at once. The rate is measured between refresh
	// starts as source versions per time, not as commits per refresh:
	// the wait itself makes refreshes take more commits, and counting
	// those would keep a slow, steady writer in "burst" forever, adding
	// the wait to every commit's latency.
	lastEnd     time.Time
	lastTook    time.Duration
	burst       bool
	rateVersion uint64        // source version at the last refresh start that named one
	rateAt      time.Time     // that start
	commitGap   time.Duration // smoothed time between source commits (0: unknown)
	burstRun    int           // consecutive refreshes that found commits bursting
}

// maxBurstWait bounds the wait burst coalescing adds; burstFactor is that
// wait in units of the last refresh's duration.
const (
	maxBurstWait = 100 * time.Millisecond
	burstFactor  = 4
	burstAfter   = 3 // bursting refreshes in a row before waits start
)

// burstWait is how long after the last refresh the next one waits while
// a burst lasts.
func (o *Owner) burstWait(pol Policy) time.Duration {
	d := min(burstFactor*o.lastTook, maxBurstWait)
	if pol.FreshnessTarget > 0 {
		d = min(d, pol.FreshnessTarget/4)
	}
	return d
}

// pendingWork is the coalesced backlog: however many wake-ups arrived,
// one refresh serves them all.
type pendingWork struct {
	has          bool
	version      uint64
	firstAt      time.Time // first wake-up of the batch (debounce)
	oldestCommit time.Time // oldest source commit not yet reflected (lag)
	full         bool
	explicit     bool
	retry        bool // Wake.Retry: skip the backoff once
	// delivery is the change sets of the view's feed this work covers
	// (at most one outstanding: the feed waits for it to be settled).
	delivery *settled
}

func (p *pendingWork) merge(w Wake, now time.Time) {
	if !p.has {
		p.has, p.firstAt = true, now
	}
	p.version = max(p.version, w.SourceVersion)
	if !w.CommittedAt.IsZero() && (p.oldestCommit.IsZero() || w.CommittedAt.Before(p.oldestCommit)) {
		p.oldestCommit = w.CommittedAt
	}
	p.full = p.full || w.Full
	p.explicit = p.explicit || w.Explicit
	p.retry = p.retry || w.Retry
}

// Outcome is one refresh attempt, as reported to OwnerConfig.OnRefresh.
type Outcome struct {
	View string
	// Result is what the refresh did (zero when Err is set).
	Result RefreshResult
	// StartedAt and Took time the attempt.
	StartedAt time.Time
	Took      time.Duration
	// Lag is source commit to view commit; < 0 when unknown.
	Lag time.Duration
	// WokenFor is the newest source version the wake-ups named (0 for a
	// catch-up or explicit refresh).
	WokenFor uint64
	// PrevSourceVersion is the source version the view reflected after
	// this owner's previous successful refresh (0 before the first).
	PrevSourceVersion uint64
	// Err is the failure, nil on success (conflicts are successes: the
	// work was done by another refresher).
	Err error
	// WokenAt is when the first wake-up (or delivery) this refresh
	// serves arrived (zero for a catch-up or a retry).
	WokenAt time.Time
}

// NewOwner returns an owner; nothing runs until Run.
func NewOwner(cfg OwnerConfig) *Owner {
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
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval = cfg.MinBackoff, cfg.MaxBackoff
	o := &Owner{
		cfg:     cfg,
		log:     cfg.Logger.With("view", cfg.View),
		wake:    make(chan struct{}, 1),
		policy:  cfg.Policy,
		backoff: b,
	}
	if cfg.CatchUp && cfg.Policy.Mode != Manual {
		o.pending.merge(Wake{}, time.Now())
		o.pending.firstAt = time.Time{} // no debounce for the catch-up
	}
	return o
}

// Notify hands the owner a wake-up; it never blocks. Wake-ups that
// arrive while a refresh runs are coalesced into the next one.
func (o *Owner) Notify(w Wake) {
	o.mu.Lock()
	o.pending.merge(w, time.Now())
	o.mu.Unlock()
	o.poke()
}

// deliver hands the owner a delivery of its feed: a wake-up for its
// newest version that carries its change sets. Under Manual it is acked
// at once and only the wake-up is kept (the refresh that serves it
// computes from the source).
func (o *Owner) deliver(d *settled) {
	w := Wake{SourceVersion: d.MaxTo(), CommittedAt: d.OldestCommit()}
	o.mu.Lock()
	if o.policy.Mode == Manual {
		// Remembered without its change sets: a later explicit refresh,
		// or a switch back to an automatic policy, catches up from the
		// source instead of waiting for the next commit.
		o.pending.merge(w, time.Now())
		o.mu.Unlock()
		o.settle(d, true, 0)
		return
	}
	prev := o.pending.delivery
	o.pending.merge(w, time.Now())
	o.pending.delivery = d
	o.mu.Unlock()
	if prev != nil { // cannot happen with one feed; never leave one unsettled
		o.settle(prev, true, 0)
	}
	o.poke()
}

// settle acks (ack) or naks a delivery; a failure only means the server
// redelivers it, which the watermark rule makes harmless.
func (o *Owner) settle(d *settled, ack bool, delay time.Duration) {
	if d == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.cfg.AckTimeout)
	defer cancel()
	var err error
	if ack {
		err = d.ack(ctx)
	} else {
		err = d.nak(ctx, delay)
	}
	if err != nil {
		o.log.Debug("settle change sets (they will be redelivered and skipped)", "ack", ack, "err", err)
	}
}

// SetPolicy changes the view's policy (the view was altered).
func (o *Owner) SetPolicy(p Policy) {
	o.mu.Lock()
	o.policy = p
	o.mu.Unlock()
	o.poke()
}

// Policy returns the current policy.
func (o *Owner) Policy() Policy {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.policy
}

// Checked reports whether the view has been looked at once: its catch-up
// refresh attempt finished, or it needs none (Manual, or no CatchUp).
func (o *Owner) Checked() bool { return o.checked.Load() }

// Committed is the view version the owner's last successful refresh
// left the view at (0 before the first).
func (o *Owner) Committed() uint64 { return o.committed.Load() }

// ViewCommitted tells the owner that the view has version v (the
// watcher saw it). A version newer than the owner's own last commit was
// made by someone else (another refresher, a restore, an alter): the next
// refresh asks the view for its watermark instead of trusting its own
// last refresh's.
func (o *Owner) ViewCommitted(v uint64) {
	for {
		old := o.seen.Load()
		if v <= old || o.seen.CompareAndSwap(old, v) {
			return
		}
	}
}

func (o *Owner) poke() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// Run refreshes the view as its policy says until ctx is done; a refresh
// in flight then finishes (see OwnerConfig.RefreshContext) before Run
// returns.
func (o *Owner) Run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	o.stopped = ctx.Done()
	defer o.acks.Wait()
	if o.Policy().Mode == Manual || !o.cfg.CatchUp {
		o.checked.Store(true) // nothing to look at before the first wake-up
	}
	for {
		if ctx.Err() != nil || o.cfg.RefreshContext.Err() != nil {
			return
		}
		work, wait := o.due(time.Now())
		if work.has {
			o.refresh(work)
			continue
		}
		var timerC <-chan time.Time
		if wait > 0 {
			timer.Reset(wait)
			timerC = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case <-o.wake:
		case <-timerC:
		}
		if wait > 0 && !timer.Stop() {
			select { // drain a fire that raced with the wake-up
			case <-timer.C:
			default:
			}
		}
	}
}

// due takes the pending work if it is due now; otherwise it says how
// long until it is (0: nothing to wait for).
func (o *Owner) due(now time.Time) (pendingWork, time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	p, pol := o.pending, o.policy
	if !p.has {
		return pendingWork{}, 0
	}
	if pol.Mode == Manual && !p.explicit {
		if d := o.pending.delivery; d != nil {
			// The next explicit refresh computes from the source; the
			// feed must not wait for it.
			o.pending.delivery = nil
			go o.settle(d, true, 0)
		}
		return pendingWork{}, 0 // kept: the next explicit refresh serves it
	}
	earliest := now
	if !p.explicit {
		if pol.Debounce > 0 && !p.firstAt.IsZero() {
			earliest = later(earliest, p.firstAt.Add(pol.Debounce))
		}
		if pol.Mode == Interval && !o.lastStart.IsZero() {
			earliest = later(earliest, o.lastStart.Add(pol.Interval))
		}
		if o.burst && pol.Mode == OnCommit {
			earliest = later(earliest, o.lastEnd.Add(o.burstWait(pol)))
		}
	}
	if !p.retry {
		earliest = later(earliest, o.retryAt)
	}
	if earliest.After(now) {
		return pendingWork{}, earliest.Sub(now)
	}
	o.pending = pendingWork{}
	return p, 0
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// refresh runs one refresh of the coalesced work.
func (o *Owner) refresh(work pendingWork) {
	start := time.Now()
	opts := RefreshOptions{Full: work.full, SourceVersion: work.version}
	if d := work.delivery; d != nil && !work.full {
		wm := o.watermark()
		cs, ok := d.Coalesce(wm, o.cfg.Incarnation())
		switch {
		case ok && cs == nil && !work.explicit && wm > 0:
			// Everything delivered is already reflected (redelivery,
			// republished range, or another refresher got there
			// first): nothing to refresh.
			o.settle(d, true, 0)
			o.checked.Store(true)
			return
		case ok && cs != nil:
			opts.Changes = cs
		}
	}
	o.lastStart = start
	o.measureRate(work.version, start)
	res, err := o.cfg.Refresher.Refresh(o.cfg.RefreshContext, opts)
	took := time.Since(start)
	o.lastEnd, o.lastTook = time.Now(), took
	// Sustained, not one slow refresh (a load spike): the wait would
	// land on top of the commits already delayed by it.
	if o.bursting(took) {
		o.burstRun++
	} else {
		o.burstRun = 0
	}
	o.burst = o.burstRun >= burstAfter
	defer o.checked.Store(true)
	if err != nil {
		if o.cfg.IsConflict(err) {
			// Another refresher committed this work first: nothing to
			// retry, nothing wrong.
			o.log.Debug("refresh conflict: already done by another refresher", "err", err)
			if o.cfg.Metrics != nil {
				o.cfg.Metrics.RefreshConflict(o.cfg.View)
			}
			o.moved.Store(true) // the view is at another refresher's commit
			o.settle(work.delivery, true, 0)
			o.succeeded()
			return
		}
		if o.cfg.RefreshContext.Err() != nil {
			return // hard stop: the view is at its old version or the new one
		}
		o.moved.Store(true) // whether the view committed is not known
		o.failures++
		delay := o.backoff.NextBackOff()
		o.retryAt = time.Now().Add(delay)
		// The retry computes from the source; the change sets come back
		// after the backoff (and are skipped if the retry covered them).
		o.settle(work.delivery, false, delay)
		work.delivery = nil
		o.log.Warn("refresh failed", "err", err, "attempt", o.failures, "retry_in", delay.Round(time.Millisecond))
		if o.cfg.Metrics != nil {
			o.cfg.Metrics.RefreshError(o.cfg.View)
		}
		o.mu.Lock()
		work.firstAt, work.retry = time.Time{}, false // the retry waits for the backoff only
		next := o.pending
		o.pending = work
		if next.has {
			o.pending.merge(Wake{SourceVersion: next.version, CommittedAt: next.oldestCommit, Full: next.full, Explicit: next.explicit, Retry: next.retry}, next.firstAt)
			o.pending.delivery = next.delivery
		}
		o.mu.Unlock()
		if o.cfg.OnRefresh != nil {
			o.cfg.OnRefresh(Outcome{View: o.cfg.View, StartedAt: start, Took: took, Lag: -1, WokenFor: work.version, PrevSourceVersion: o.reflected, Err: err})
		}
		return
	}
	if o.failures > 0 {
		o.log.Info("refresh recovered", "after_failures", o.failures)
	}
	o.succeeded()
	o.committed.Store(res.Version)
	// The view commit is done: the change sets it covers are spent. The
	// ack's round trip runs beside the notification, not before it.
	o.settleAsync(work.delivery)
	lag := time.Duration(-1)
	switch {
	case !work.oldestCommit.IsZero():
		end := res.CommittedAt
		if end.IsZero() {
			end = time.Now()
		}
		lag = end.Sub(work.oldestCommit)
	case !res.CommittedAt.IsZero() && !res.SourceCommittedAt.IsZero() && res.Mode != "no_op":
		lag = res.CommittedAt.Sub(res.SourceCommittedAt)
	}
	pol := o.Policy()
	missed := pol.FreshnessTarget > 0 && lag > pol.FreshnessTarget
	if missed {
		o.log.Warn("freshness target missed", "lag", lag.Round(time.Microsecond), "target", pol.FreshnessTarget, "mode", res.Mode)
	}
	o.log.Debug("refreshed", "mode", res.Mode, "rows", res.RowsWritten, "source_version", res.SourceVersion,
		"version", res.Version, "took", took.Round(time.Microsecond), "lag", lag.Round(time.Microsecond))
	if o.cfg.Metrics != nil {
		o.cfg.Metrics.Refreshed(o.cfg.View, res, took, lag, missed)
	}
	// Wake-ups for versions this refresh already reflects are spent.
	var spent *settled
	o.mu.Lock()
	if p := o.pending; p.has && !p.full && !p.explicit && p.version != 0 && p.version <= res.SourceVersion {
		spent = p.delivery
		o.pending = pendingWork{}
	}
	idle := !o.pending.has
	o.mu.Unlock()
	o.settle(spent, true, 0)
	if o.cfg.OnRefresh != nil {
		o.cfg.OnRefresh(Outcome{View: o.cfg.View, Result: res, StartedAt: start, Took: took, Lag: lag, WokenFor: work.version, PrevSourceVersion: o.reflected, WokenAt: work.firstAt})
	}
	o.reflected = res.SourceVersion
	if m, ok := o.cfg.Refresher.(Maintainer); ok && idle {
		if err := m.Maintain(o.cfg.RefreshContext); err != nil && o.cfg.RefreshContext.Err() == nil {
			o.log.Warn("maintenance failed", "err", err)
		}
	}
}

// bursting reports whether source commits come at least twice as fast as
// refreshes of took finish: only then does waiting to take several at once
// pay. A writer about as fast as the refreshes is served commit by commit
// (each refresh takes whatever arrived meanwhile), so its commits never
// wait for a burst wait on top of the refresh they queue behind.
func (o *Owner) bursting(took time.Duration) bool {
	return o.commitGap > 0 && 2*o.commitGap < took
}

// measureRate updates commitGap from the source version a refresh starting
// at start was woken for (0: not known, a catch-up or explicit refresh).
func (o *Owner) measureRate(version uint64, start time.Time) {
	if version == 0 {
		return
	}
	if version > o.rateVersion && !o.rateAt.IsZero() {
		gap := start.Sub(o.rateAt) / time.Duration(version-o.rateVersion)
		if o.commitGap == 0 {
			o.commitGap = gap
		} else {
			o.commitGap = (o.commitGap + gap) / 2
		}
	} else if version == o.rateVersion {
		return // a retry or an explicit refresh of the same version
	}
	o.rateVersion, o.rateAt = version, start
}

// ackRetryMax bounds the wait between attempts to ack a delivery whose
// ack failed (NATS away); attempts stop after the consumer's ack wait,
// when the server redelivers it anyway.
const (
	ackRetryMin = 100 * time.Millisecond
	ackRetryMax = 2 * time.Second
	ackRetryFor = 30 * time.Second
)

// settleAsync acks d on a goroutine Run waits for. An ack lost with the
// connection is retried until NATS is back (an ack names its message, so
// a late one still counts), instead of leaving the change set to be
// redelivered, and skipped, only after the ack wait.
func (o *Owner) settleAsync(d *settled) {
	if d == nil {
		return
	}
	o.acks.Add(1)
	go func() {
		defer o.acks.Done()
		ctx, cancel := context.WithTimeout(context.Background(), o.cfg.AckTimeout)
		err := d.ack(ctx)
		cancel()
		deadline := time.Now().Add(ackRetryFor)
		for wait := ackRetryMin; err != nil && time.Now().Before(deadline); wait = min(2*wait, ackRetryMax) {
			t := time.NewTimer(wait)
			select {
			case <-o.stopped:
				t.Stop()
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), o.cfg.AckTimeout)
			err = d.Ack(ctx)
			cancel()
		}
		if err != nil {
			o.log.Debug("ack change sets (they will be redelivered and skipped)", "err", err)
		}
	}()
}

// watermark is the source version the view reflects: the owner's last
// refresh's while the view has had no commit by anyone else since (no
// read on the refresh path), else asked of the view when the refresher
// can tell, else the owner's last refresh (0: unknown; a lower value than
// the truth is safe, it only makes a delivery look unusable, never
// covered; a higher one only skips a delivery that the next refresh, which
// starts from the view's own watermark, covers anyway).
func (o *Owner) watermark() uint64 {
	if o.reflected > 0 && !o.moved.Load() && o.seen.Load() <= o.committed.Load() {
		return o.reflected
	}
	if w, ok := o.cfg.Refresher.(Watermarker); ok {
		ctx, cancel := context.WithTimeout(o.cfg.RefreshContext, 5*time.Second)
		defer cancel()
		o.moved.Store(false) // before the read: a commit after it counts
		if v, err := w.Watermark(ctx); err == nil {
			return v
		}
		o.moved.Store(true)
	}
	return o.reflected
}

func (o *Owner) succeeded() {
	o.failures, o.retryAt = 0, time.Time{}
	o.backoff.Reset()
}
