package daemon

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mvd-project/mvd/control"
	"github.com/mvd-project/mvd/matview"
)

// controlJobs is the server's job service as package control's executor
// uses it: POST /v1/sql runs REFRESH … WITH (async = true) and the job
// statements through it, as `mvd sql` does through the job routes.
type controlJobs struct{ s *Server }

var _ control.Jobs = controlJobs{}

// jobsSetter is a control API handler that runs job statements (package
// control/httpapi's).
type jobsSetter interface{ SetJobs(control.Jobs) }

// jobWaitForever bounds a wait only by its context.
const jobWaitForever = 24 * time.Hour

// Submit implements control.Jobs.
func (c controlJobs) Submit(ctx context.Context, req control.RefreshRequest) (control.Job, error) {
	j, _, err := c.s.submitJob(ctx, JobRequest{View: req.View, Full: req.Full, SourceVersion: req.SourceVersion, Budget: req.Budget})
	if err != nil {
		return control.Job{}, err
	}
	return j.Control(), nil
}

// List implements control.Jobs.
func (c controlJobs) List(ctx context.Context, view string) ([]control.Job, error) {
	js := c.s.jobs.list(view)
	out := make([]control.Job, len(js))
	for i, j := range js {
		out[i] = j.Control()
	}
	return out, nil
}

// Get implements control.Jobs.
func (c controlJobs) Get(ctx context.Context, id string) (control.Job, error) {
	j, err := c.s.jobs.get(id)
	return j.Control(), jobNotFound(err)
}

// Cancel implements control.Jobs: the job in the state it ended in.
func (c controlJobs) Cancel(ctx context.Context, id string) (control.Job, error) {
	if _, err := c.s.jobs.cancel(id); err != nil && !errors.Is(err, ErrJobEnded) {
		return control.Job{}, jobNotFound(err)
	}
	return c.Wait(ctx, id)
}

// Wait implements control.Jobs.
func (c controlJobs) Wait(ctx context.Context, id string) (control.Job, error) {
	j, _, err := c.s.jobs.wait(ctx, id, jobWaitForever)
	if err == nil && !j.State.Done() {
		err = ctx.Err()
	}
	return j.Control(), jobNotFound(err)
}

// jobNotFound makes the service's unknown job control.ErrJobNotFound.
func jobNotFound(err error) error {
	if errors.Is(err, ErrJobNotFound) {
		return fmt.Errorf("%s: %w", err.Error(), control.ErrJobNotFound)
	}
	return err
}

// Control is the job as package control describes it (what mvd sql's
// job statements print).
func (j Job) Control() control.Job {
	out := control.Job{ID: j.ID, View: j.View, State: control.JobState(j.State), SubmittedAt: j.SubmittedAt, Error: j.Error,
		Request: control.RefreshRequest{View: j.Request.View, Full: j.Request.Full, SourceVersion: j.Request.SourceVersion, Budget: j.Request.Budget}}
	if !j.StartedAt.IsZero() {
		t := j.StartedAt
		out.StartedAt = &t
	}
	if !j.EndedAt.IsZero() {
		t := j.EndedAt
		out.EndedAt = &t
	}
	if r := j.Result; r != nil {
		out.Result = &matview.Result{Mode: matview.Mode(r.Mode), RowsWritten: r.RowsWritten, SourceVersion: r.SourceVersion,
			Version: r.Version, Warnings: r.Warnings, Reason: r.Reason}
	}
	return out
}
