package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/mvd-project/mvd/control"
	"github.com/mvd-project/mvd/control/client"
	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/matview"
)

// jobClient talks to the daemon's job routes (docs/control.md, Jobs). It
// implements control.Jobs, through which `mvd sql` runs REFRESH … WITH
// (async = true) and the job statements.
type jobClient struct{ c *client.Client }

var _ control.Jobs = jobClient{}

// jobWaitStep is one wait request's timeout: the daemon answers within
// it (it caps a wait at 20s), and the client asks again.
const jobWaitStep = 15 * time.Second

// daemonJobs returns the job client of the daemon serving dir, with the
// command's admin token; without a daemon it fails with
// control.ErrNoDaemon (exit 1) and nothing is submitted.
func daemonJobs(cmd *cobra.Command, dir string) (jobClient, error) {
	c, running, err := findDaemon(cmd, dir)
	if err != nil {
		return jobClient{}, err
	}
	if !running {
		return jobClient{}, control.ErrNoDaemon
	}
	return jobClient{c}, nil
}

// submit submits an async refresh and returns the job's id.
func (j jobClient) submit(ctx context.Context, req control.RefreshRequest) (string, error) {
	body := map[string]any{"async": true}
	if req.Full {
		body["full"] = true
	}
	if req.SourceVersion != nil {
		body["source_version"] = *req.SourceVersion
	}
	b := req.Budget
	for k, v := range map[string]*int64{"cpu_millis": b.CPUMillis, "memory_bytes": b.MemoryBytes, "gpu_count": b.GPUCount} {
		if v != nil {
			body[k] = *v
		}
	}
	if b.GPUClass != nil {
		body["gpu_class"] = *b.GPUClass
	}
	var out struct {
		JobID string `json:"job_id"`
	}
	if err := j.c.Do(ctx, "POST", "/v1/views/"+url.PathEscape(req.View)+"/refresh", body, &out); err != nil {
		return "", err
	}
	if out.JobID == "" {
		return "", errors.New("the daemon answered no job id")
	}
	return out.JobID, nil
}

// job returns job id as the daemon reports it.
func (j jobClient) job(ctx context.Context, id string) (daemon.Job, error) {
	var out daemon.Job
	err := j.c.Do(ctx, "GET", "/v1/jobs/"+url.PathEscape(id), nil, &out)
	return out, err
}

// jobs returns the jobs (of view, if not ""), newest first.
func (j jobClient) jobs(ctx context.Context, view string) ([]daemon.Job, error) {
	path := "/v1/jobs"
	if view != "" {
		path += "?view=" + url.QueryEscape(view)
	}
	var out []daemon.Job
	err := j.c.Do(ctx, "GET", path, nil, &out)
	return out, err
}

// wait waits until job id ends or ctx is done; it returns the job as it
// last was (not ended: ctx ran out).
func (j jobClient) wait(ctx context.Context, id string) (daemon.Job, error) {
	for {
		step := jobWaitStep
		if dl, ok := ctx.Deadline(); ok {
			step = min(step, time.Until(dl))
		}
		var out daemon.Job
		err := j.c.Do(ctx, "POST", fmt.Sprintf("/v1/jobs/%s/wait?timeout=%s", url.PathEscape(id), max(step, 0)), nil, &out)
		if err != nil {
			if ctx.Err() != nil {
				last, gerr := j.job(context.WithoutCancel(ctx), id)
				if gerr == nil {
					return last, nil
				}
			}
			return out, err
		}
		if out.State.Done() || ctx.Err() != nil {
			return out, nil
		}
	}
}

// cancel asks the daemon to cancel job id.
func (j jobClient) cancel(ctx context.Context, id string) (daemon.Job, error) {
	var out daemon.Job
	err := j.c.Do(ctx, "POST", "/v1/jobs/"+url.PathEscape(id)+"/cancel", nil, &out)
	return out, err
}

// Submit implements control.Jobs.
func (j jobClient) Submit(ctx context.Context, req control.RefreshRequest) (control.Job, error) {
	id, err := j.submit(ctx, req)
	if err != nil {
		return control.Job{}, err
	}
	return j.Get(ctx, id)
}

// List implements control.Jobs.
func (j jobClient) List(ctx context.Context, view string) ([]control.Job, error) {
	js, err := j.jobs(ctx, view)
	if err != nil {
		return nil, err
	}
	out := make([]control.Job, len(js))
	for i, dj := range js {
		out[i] = dj.Control()
	}
	return out, nil
}

// Get implements control.Jobs.
func (j jobClient) Get(ctx context.Context, id string) (control.Job, error) {
	dj, err := j.job(ctx, id)
	return dj.Control(), notFound(err)
}

// Cancel implements control.Jobs: the job in the state it ended in (a
// cancel of an ended job changes nothing and returns it).
func (j jobClient) Cancel(ctx context.Context, id string) (control.Job, error) {
	if _, err := j.cancel(ctx, id); err != nil {
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != 409 {
			return control.Job{}, notFound(err)
		}
	}
	dj, err := j.wait(ctx, id)
	return dj.Control(), err
}

// Wait implements control.Jobs.
func (j jobClient) Wait(ctx context.Context, id string) (control.Job, error) {
	dj, err := j.wait(ctx, id)
	if err == nil && !dj.State.Done() {
		err = ctx.Err()
	}
	return dj.Control(), notFound(err)
}

// notFound makes the daemon's 404 for a job control.ErrJobNotFound.
func notFound(err error) error {
	var ce *client.Error
	if errors.As(err, &ce) && ce.Status == 404 {
		return fmt.Errorf("%s: %w", ce.Msg, control.ErrJobNotFound)
	}
	return err
}

// jobResult is a job's result as `mvd view refresh` prints it.
func jobResult(r *daemon.JobResult) *matview.Result {
	return &matview.Result{Mode: matview.Mode(r.Mode), RowsWritten: r.RowsWritten, SourceVersion: r.SourceVersion, Version: r.Version, Warnings: r.Warnings, Reason: r.Reason}
}

// lazyJobs is control.Jobs for `mvd sql`: each call finds the daemon
// serving dir (with MVD_ADMIN_TOKEN), so a shell started before mvd
// serve uses it once it runs; without one, calls fail with
// control.ErrNoDaemon and nothing is submitted.
type lazyJobs struct{ dir string }

var _ control.Jobs = lazyJobs{}

func (l lazyJobs) find() (jobClient, error) {
	token, err := client.Token("", os.Getenv)
	if err != nil {
		return jobClient{}, err
	}
	c, running, err := client.Find(l.dir, token)
	if err != nil {
		return jobClient{}, err
	}
	if !running {
		return jobClient{}, control.ErrNoDaemon
	}
	return jobClient{c}, nil
}

// Submit implements control.Jobs.
func (l lazyJobs) Submit(ctx context.Context, req control.RefreshRequest) (control.Job, error) {
	j, err := l.find()
	if err != nil {
		return control.Job{}, err
	}
	return j.Submit(ctx, req)
}

// List implements control.Jobs.
func (l lazyJobs) List(ctx context.Context, view string) ([]control.Job, error) {
	j, err := l.find()
	if err != nil {
		return nil, err
	}
	return j.List(ctx, view)
}

// Get implements control.Jobs.
func (l lazyJobs) Get(ctx context.Context, id string) (control.Job, error) {
	j, err := l.find()
	if err != nil {
		return control.Job{}, err
	}
	return j.Get(ctx, id)
}

// Cancel implements control.Jobs.
func (l lazyJobs) Cancel(ctx context.Context, id string) (control.Job, error) {
	j, err := l.find()
	if err != nil {
		return control.Job{}, err
	}
	return j.Cancel(ctx, id)
}

// Wait implements control.Jobs.
func (l lazyJobs) Wait(ctx context.Context, id string) (control.Job, error) {
	j, err := l.find()
	if err != nil {
		return control.Job{}, err
	}
	return j.Wait(ctx, id)
}
