package daemon

import (
	"context"
	"errors"
	"time"

	"github.com/mvd-project/mvd/vfs"
)

// Outcome is one refresh attempt, as reported to OwnerConfig.OnRefresh.
type Outcome struct {
	View string
	// Result is what the refresh did. When Err is set only Version and
	// SourceVersion are: where the view still is, as far as it can be read.
	Result RefreshResult
	// StartedAt and Took time the attempt.
	StartedAt time.Time
	Took      time.Duration
	// Lag is source commit to view commit; < 0 when unknown.
	Lag time.Duration
	// WokenFor is the newest source version the wake-ups named (0 for a
	// catch-up or a wake-up without one).
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
	// Retries is how many failed attempts came before this one in a row
	// (0 for a first attempt).
	Retries int
	// Repeated is set on a failure with the same error as the attempt
	// before it: already reported, not news.
	Repeated bool
	// RetryIn is the wait before the next attempt, after a failure.
	RetryIn time.Duration
	// Cleared is, on a success, the error of the failures it ends ("" if
	// the attempt before it succeeded).
	Cleared string
}

// refresh runs one refresh of the coalesced work.
func (o *viewOwner) refresh(work pendingWork) {
	start := o.clock.Now()
	opts, covered := o.plan(work)
	if covered {
		// Everything delivered is already reflected (redelivery,
		// republished range, or another refresher got there first):
		// nothing to refresh.
		o.settles.ack(work.delivery)
		o.checked.Store(true)
		return
	}
	o.sched.lastStart = start
	o.burst.started(work.version, start)
	res, err := o.attempt(opts)
	end := o.clock.Now()
	o.burst.ended(end.Sub(start), end)
	defer o.checked.Store(true)
	switch {
	case err == nil:
		o.succeeded(work, res, start, end)
	case o.cfg.IsConflict(err):
		o.conflicted(work, err)
	case o.cfg.RefreshContext.Err() != nil:
		return // hard stop: the view is at its old version or the new one
	default:
		o.failed(work, err, start, end)
	}
	// A commit of the view by someone else seen while the refresh ran
	// is judged now that the refresh's own commit is known.
	o.checkForeign()
}

// plan turns work into a refresh's options; covered means the work's
// delivery is already reflected by the view and nothing is to be done.
func (o *viewOwner) plan(work pendingWork) (opts RefreshOptions, covered bool) {
	opts = RefreshOptions{Full: work.full, SourceVersion: work.version}
	d := work.delivery
	if d == nil || work.full {
		return opts, false
	}
	wm := o.watermark()
	cs, ok := d.Coalesce(wm, o.cfg.Incarnation())
	switch {
	case ok && cs == nil && wm > 0:
		return opts, true
	case ok && cs != nil:
		opts.Changes = cs
	}
	return opts, false
}

// attempt runs the refresher once, on a new handle if the last attempt
// poisoned the old one.
func (o *viewOwner) attempt(opts RefreshOptions) (RefreshResult, error) {
	return o.attemptCtx(o.cfg.RefreshContext, opts)
}

// attemptCtx is attempt under ctx (a job's refresh has its own, which
// its cancel cancels).
func (o *viewOwner) attemptCtx(ctx context.Context, opts RefreshOptions) (RefreshResult, error) {
	if o.reopen {
		r, err := o.cfg.Reopen(ctx)
		if err != nil {
			return RefreshResult{}, err // the condition has not cleared
		}
		o.r, o.reopen = r, false
		o.log.Info("view reopened after a failed sync")
		if o.cfg.Metrics != nil {
			o.cfg.Metrics.ViewReopened(o.cfg.View)
		}
	}
	o.inFlight.Store(true)
	res, err := o.r.Refresh(ctx, opts)
	if err == nil {
		o.committed.Store(res.Version)
	}
	o.inFlight.Store(false)
	if errors.Is(err, vfs.ErrNotDurable) && o.cfg.Reopen != nil {
		// The handle refuses every later commit: only a new one heals.
		o.reopen = true
	}
	return res, err
}

// succeeded settles what a successful refresh covered and reports it.
func (o *viewOwner) succeeded(work pendingWork, res RefreshResult, start, end time.Time) {
	retries, cleared := o.failures, o.lastErr
	if o.failures > 0 {
		o.log.Info("refresh recovered", "after_failures", o.failures)
	}
	o.failures, o.lastErr = 0, ""
	o.resetBackoff()
	// The view commit is done: the change sets it covers are spent.
	o.settles.ack(work.delivery)
	took := end.Sub(start)
	lag := lagOf(work, res, end)
	pol := o.Policy()
	missed := pol.FreshnessTarget > 0 && lag > pol.FreshnessTarget
	if missed {
		o.log.Warn("freshness target missed", "lag", lag.Round(time.Microsecond), "target", pol.FreshnessTarget, "mode", res.Mode)
	}
	for _, w := range res.Warnings {
		o.log.Warn("refresh committed with a warning", "version", res.Version, "warning", w)
	}
	o.log.Debug("refreshed", "mode", res.Mode, "rows", res.RowsWritten, "source_version", res.SourceVersion,
		"version", res.Version, "took", took.Round(time.Microsecond), "lag", lag.Round(time.Microsecond))
	if o.cfg.Metrics != nil {
		o.cfg.Metrics.Refreshed(o.cfg.View, res, took, lag, missed)
	}
	// Wake-ups for versions this refresh already reflects are spent.
	var spent *settled
	o.mu.Lock()
	if p := o.pending; p.has && !p.full && p.version != 0 && p.version <= res.SourceVersion {
		spent = p.delivery
		o.pending = pendingWork{}
	}
	idle := !o.pending.has && len(o.queued) == 0 // a job waiting goes first
	o.mu.Unlock()
	o.settles.ack(spent)
	if o.cfg.OnRefresh != nil {
		o.cfg.OnRefresh(Outcome{View: o.cfg.View, Result: res, StartedAt: start, Took: took, Lag: lag, WokenFor: work.version,
			PrevSourceVersion: o.reflected, WokenAt: work.firstAt, Retries: retries, Cleared: cleared})
	}
	o.reflected = res.SourceVersion
	if idle {
		o.maintain()
	}
}

// lagOf is source commit to view commit for a refresh of work that ended
// at end (< 0: unknown).
func lagOf(work pendingWork, res RefreshResult, end time.Time) time.Duration {
	switch {
	case !work.oldestCommit.IsZero():
		if !res.CommittedAt.IsZero() {
			end = res.CommittedAt
		}
		return end.Sub(work.oldestCommit)
	case !res.CommittedAt.IsZero() && !res.SourceCommittedAt.IsZero() && res.Mode != "no_op":
		return res.CommittedAt.Sub(res.SourceCommittedAt)
	}
	return -1
}

// conflicted handles a refresh that lost to another refresher's commit of
// the same work: nothing to retry, nothing wrong.
func (o *viewOwner) conflicted(work pendingWork, err error) {
	o.log.Debug("refresh conflict: already done by another refresher", "err", err)
	if o.cfg.Metrics != nil {
		o.cfg.Metrics.RefreshConflict(o.cfg.View)
	}
	o.moved.Store(true) // the view is at another refresher's commit
	o.settles.ack(work.delivery)
	// A failure being reported stays so until a refresh of this owner
	// succeeds (its notification says it cleared); only the wait ends.
	o.resetBackoff()
}

// failed schedules the retry of a failed refresh and reports the failure.
func (o *viewOwner) failed(work pendingWork, err error, start, end time.Time) {
	o.moved.Store(true) // whether the view committed is not known
	o.failures++
	// The library's jitter spreads the wait around its interval, up to
	// half as much again: the documented cap holds for the wait itself.
	delay := min(o.backoff.NextBackOff(), o.cfg.MaxBackoff)
	o.sched.retryAt = end.Add(delay)
	// The retry computes from the source; the change sets come back
	// after the backoff (and are skipped if the retry covered them).
	o.settles.nak(work.delivery, delay)
	work.delivery = nil
	repeated := err.Error() == o.lastErr
	o.lastErr = err.Error()
	if repeated {
		o.log.Debug("refresh failed again", "err", err, "attempt", o.failures, "retry_in", delay.Round(time.Millisecond))
	} else {
		o.log.Warn("refresh failed", "err", err, "attempt", o.failures, "retry_in", delay.Round(time.Millisecond))
	}
	if o.cfg.Metrics != nil {
		o.cfg.Metrics.RefreshError(o.cfg.View)
	}
	o.requeue(work)
	if o.cfg.OnRefresh != nil {
		o.cfg.OnRefresh(Outcome{View: o.cfg.View, Result: o.viewState(), StartedAt: start, Took: end.Sub(start), Lag: -1,
			WokenFor: work.version, PrevSourceVersion: o.reflected, Err: err, Retries: o.failures - 1, Repeated: repeated, RetryIn: delay})
	}
}

// requeue puts failed work back, merged with what arrived meanwhile: the
// retry serves both, after the backoff only (no debounce).
func (o *viewOwner) requeue(work pendingWork) {
	o.mu.Lock()
	defer o.mu.Unlock()
	work.firstAt, work.retry = time.Time{}, false
	next := o.pending
	o.pending = work
	if next.has {
		o.pending.merge(wakeUp{SourceVersion: next.version, CommittedAt: next.oldestCommit, Full: next.full, Retry: next.retry}, next.firstAt)
		o.pending.delivery = next.delivery
	}
}

func (o *viewOwner) resetBackoff() {
	o.sched.retryAt = time.Time{}
	o.backoff.Reset()
}

// viewState is where the view is after a failed refresh: read from the
// view when the refresher can tell, else what this owner last left it at.
func (o *viewOwner) viewState() RefreshResult {
	if w, ok := o.r.(Watermarker); ok {
		ctx, cancel := context.WithTimeout(o.cfg.RefreshContext, 5*time.Second)
		defer cancel()
		if st, err := w.Watermark(ctx); err == nil {
			return RefreshResult{Version: st.Version, SourceVersion: st.SourceVersion}
		}
	}
	return RefreshResult{Version: o.committed.Load(), SourceVersion: o.reflected}
}

// watermark is the source version the view reflects: the owner's last
// refresh's while the view has had no commit by anyone else since (no
// read on the refresh path), else asked of the view when the refresher
// can tell, else the owner's last refresh (0: unknown; a lower value than
// the truth is safe, it only makes a delivery look unusable, never
// covered; a higher one only skips a delivery that the next refresh, which
// starts from the view's own watermark, covers anyway).
func (o *viewOwner) watermark() uint64 {
	if o.reflected > 0 && !o.moved.Load() && o.seen.Load() <= o.committed.Load() {
		return o.reflected
	}
	if w, ok := o.r.(Watermarker); ok {
		ctx, cancel := context.WithTimeout(o.cfg.RefreshContext, 5*time.Second)
		defer cancel()
		o.moved.Store(false) // before the read: a commit after it counts
		if st, err := w.Watermark(ctx); err == nil {
			return st.SourceVersion
		}
		o.moved.Store(true)
	}
	return o.reflected
}
