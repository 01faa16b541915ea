package daemon

import (
	"context"
	"errors"
	"time"
)

// ownerJob is a refresh job waiting in its view's owner.
type ownerJob struct {
	run  *jobRun
	opts RefreshOptions
}

// submitJob queues a refresh job; the owner runs it before any pending
// auto-refresh work, whatever the policy (a job is a refresh by hand).
func (o *viewOwner) submitJob(r *jobRun, opts JobRequest) {
	ro := RefreshOptions{Full: opts.Full, Budget: opts.Budget}
	if opts.SourceVersion != nil {
		ro.SourceVersion, ro.Pin = *opts.SourceVersion, true
	}
	o.mu.Lock()
	stopped := o.stopped
	if !stopped {
		o.queued = append(o.queued, &ownerJob{run: r, opts: ro})
	}
	o.mu.Unlock()
	if stopped {
		o.cfg.jobs.finish(r, JobInterrupted, nil, errOwnerStopped, "")
		return
	}
	o.poke()
}

// takeJob takes the oldest queued job (nil: none).
func (o *viewOwner) takeJob() *ownerJob {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.queued) == 0 {
		return nil
	}
	j := o.queued[0]
	o.queued[0] = nil
	o.queued = o.queued[1:]
	return j
}

// errOwnerStopped ends the jobs still queued when an owner stops.
var errOwnerStopped = errors.New("the view's owner stopped before the job ran (the daemon is stopping, or the view was dropped or recreated); nothing was committed")

// abandonJobs ends the jobs still queued: interrupted, never run.
func (o *viewOwner) abandonJobs() {
	o.mu.Lock()
	o.stopped = true // a job submitted from now on is not run
	o.mu.Unlock()
	for j := o.takeJob(); j != nil; j = o.takeJob() {
		o.cfg.jobs.finish(j.run, JobInterrupted, nil, errOwnerStopped, "")
	}
}

// runJob runs one job's refresh on the owner's goroutine and reports it
// as the owner's own refreshes are (history, notification, metrics).
func (o *viewOwner) runJob(j *ownerJob) {
	js := o.cfg.jobs
	ctx, ok := js.start(j.run, o.cfg.RefreshContext)
	if !ok {
		return // cancelled while queued
	}
	if js.hold != nil {
		if err := js.hold(ctx); err != nil && ctx.Err() == nil {
			o.log.Warn("job hold", "job", j.run.job.ID, "err", err)
		}
	}
	start := o.clock.Now()
	var res RefreshResult
	err := ctx.Err()
	if err == nil {
		res, err = o.attemptCtx(ctx, j.opts)
	}
	end := o.clock.Now()
	switch {
	case err == nil:
		note := ""
		if ctx.Err() != nil && o.cfg.RefreshContext.Err() == nil {
			note = "the cancel came after the refresh's commit had landed"
		}
		// The job ends with its commit; the owner's bookkeeping (history,
		// notification, a maintenance step when idle) follows.
		js.finish(j.run, JobSucceeded, &JobResult{Mode: res.Mode, RowsWritten: res.RowsWritten,
			SourceVersion: res.SourceVersion, Version: res.Version, Warnings: res.Warnings, Reason: res.Reason}, nil, note)
		o.succeeded(pendingWork{}, res, start, end)
	case o.cfg.IsConflict(err):
		o.conflicted(pendingWork{}, err)
		js.finish(j.run, JobConflict, nil, err, "")
	case o.cfg.RefreshContext.Err() != nil:
		o.moved.Store(true)
		js.finish(j.run, JobInterrupted, nil, err, "the daemon stopped at once during the refresh; the view is at its previous version or at the job's result, whole")
	case ctx.Err() != nil:
		o.moved.Store(true)
		js.finish(j.run, JobCancelled, nil, err, "cancelled before its commit; nothing was committed")
	default:
		o.jobFailed(err, start, end)
		js.finish(j.run, JobFailed, nil, err, "")
	}
	o.checkForeign()
}

// jobFailed reports a failed job's refresh. Unlike an auto-refresh's
// failure it schedules no retry: the job's submitter has its error.
func (o *viewOwner) jobFailed(err error, start, end time.Time) {
	o.moved.Store(true) // whether the view committed is not known
	o.log.Warn("refresh job failed", "err", err)
	if o.cfg.Metrics != nil {
		o.cfg.Metrics.RefreshError(o.cfg.View)
	}
	if o.cfg.OnRefresh != nil {
		o.cfg.OnRefresh(Outcome{View: o.cfg.View, Result: o.viewState(), StartedAt: start, Took: end.Sub(start), Lag: -1,
			PrevSourceVersion: o.reflected, Err: err})
	}
}

// holdWhileExists returns a job hold that waits while the file at path
// exists (or until ctx is done): a test keeps a job running, e.g. to kill
// the daemon under it, by creating the file before submitting the job.
func holdWhileExists(path string, exists func(string) bool) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for exists(path) {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
		}
		return nil
	}
}
