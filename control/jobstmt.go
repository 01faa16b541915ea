package control

import (
	"context"
	"errors"

	"github.com/mvd-project/mvd/sqlexpr"
)

func (e *Executor) showJobs(ctx context.Context) (*Result, error) {
	if e.Jobs == nil {
		return nil, at(0, ErrNoDaemon)
	}
	jobs, err := e.Jobs.List(ctx, "")
	if err != nil {
		return nil, at(jobErrorPos(err, 0, 0), err)
	}
	if jobs == nil {
		jobs = []Job{}
	}
	return &Result{Kind: KindShowJobs, Jobs: jobs}, nil
}

func (e *Executor) describeJob(ctx context.Context, s *sqlexpr.DescribeJob) (*Result, error) {
	if e.Jobs == nil {
		return nil, at(0, ErrNoDaemon)
	}
	job, err := e.Jobs.Get(ctx, s.ID)
	if err != nil {
		return nil, at(jobErrorPos(err, 0, s.IDPos), err)
	}
	return &Result{Kind: KindDescribeJob, Job: &job}, nil
}

func (e *Executor) cancelJob(ctx context.Context, s *sqlexpr.CancelJob) (*Result, error) {
	if e.Jobs == nil {
		return nil, at(0, ErrNoDaemon)
	}
	job, err := e.Jobs.Cancel(ctx, s.ID)
	if err != nil {
		return nil, at(jobErrorPos(err, 0, s.IDPos), err)
	}
	return &Result{Kind: KindCancelJob, Job: &job}, nil
}

// jobErrorPos is where a Jobs failure points: noDaemon (what needed the
// daemon) when none runs, else pos (the view or job it concerns).
func jobErrorPos(err error, noDaemon, pos int) int {
	if errors.Is(err, ErrNoDaemon) {
		return noDaemon
	}
	return pos
}
