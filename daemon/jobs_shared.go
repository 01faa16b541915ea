package daemon

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// SharedJobStore is a JobStore several instances of one database share
// (with --nats-url: a JetStream key-value bucket). Jobs returns this
// instance's records only — those it numbers, trims and, at start, marks
// interrupted — and AllJobs every instance's, so that the job listings
// (SHOW JOBS, GET /v1/jobs, DESCRIBE JOB) on any instance show them all.
type SharedJobStore interface {
	JobStore
	AllJobs(ctx context.Context) ([]JobRecord, error)
}

// sharedPoll is how often waiting on another instance's job re-reads it.
const sharedPoll = 100 * time.Millisecond

// foreign returns the jobs other instances keep in a SharedJobStore
// (none without one): every record whose job this service does not know.
func (js *jobService) foreign(ctx context.Context) ([]Job, error) {
	ss, ok := js.store.(SharedJobStore)
	if !ok {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, jobStoreTimeout)
	defer cancel()
	recs, err := ss.AllJobs(ctx)
	if err != nil {
		return nil, fmt.Errorf("read other instances' refresh jobs: %w", err)
	}
	js.mu.Lock()
	defer js.mu.Unlock()
	var out []Job
	for _, rec := range recs {
		var j Job
		if err := json.Unmarshal(rec.Value, &j); err != nil {
			js.log.Warn("refresh job record unreadable; skipped", "seq", rec.Seq, "err", err)
			continue
		}
		if js.byID[j.ID] == nil {
			out = append(out, j)
		}
	}
	return out, nil
}

// withForeign adds to local (this instance's jobs of view, newest first)
// the other instances' jobs of view, all newest first by submission. When
// the shared store cannot be read the listing is this instance's, and the
// failure is logged.
func (js *jobService) withForeign(view string, local []Job) []Job {
	others, err := js.foreign(context.Background())
	if err != nil {
		js.log.Warn("job listing without other instances' jobs", "err", err)
	}
	if len(others) == 0 {
		return local
	}
	for _, j := range others {
		if view == "" || j.View == view {
			local = append(local, j)
		}
	}
	slices.SortStableFunc(local, func(a, b Job) int {
		if c := b.SubmittedAt.Compare(a.SubmittedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	return local
}

// foreignJob returns another instance's job id from the shared store.
func (js *jobService) foreignJob(ctx context.Context, id string) (Job, bool, error) {
	others, err := js.foreign(ctx)
	if err != nil {
		return Job{}, false, err
	}
	for _, j := range others {
		if j.ID == id {
			return j, true, nil
		}
	}
	return Job{}, false, nil
}

// waitForeign waits, reading the shared store every sharedPoll, until
// another instance's job id ends, ctx is done or timeout passes.
func (js *jobService) waitForeign(ctx context.Context, id string, timeout time.Duration) (Job, error) {
	deadline := time.Now().Add(timeout)
	for {
		j, ok, err := js.foreignJob(ctx, id)
		switch {
		case err != nil:
			return Job{}, err
		case !ok:
			return Job{}, fmt.Errorf("job %s: %w", id, ErrJobNotFound)
		case j.State.Done() || !time.Now().Before(deadline):
			return j, nil
		}
		t := time.NewTimer(min(sharedPoll, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return j, nil
		case <-t.C:
		}
	}
}
