package control

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mvd-project/mvd/matview"
)

// Sentinel errors of the job statements.
var (
	// ErrNoDaemon means a statement needs the daemon (an asynchronous
	// refresh, a job statement) and none serves the database. Nothing was
	// submitted or changed.
	ErrNoDaemon = errors.New("no mvd serve is running for this database (start `mvd serve --db DIR`; jobs run in the daemon)")
	// ErrJobNotFound means no job has the ID. It also wraps
	// matview.ErrNotFound, so that callers branching on that see it too.
	ErrJobNotFound = fmt.Errorf("job %w", matview.ErrNotFound)
)

// JobState is where a job is in its life. A job moves from queued to
// running to exactly one of the final states, and never back.
type JobState string

// The states of a job.
const (
	// JobQueued: submitted, not started.
	JobQueued JobState = "queued"
	// JobRunning: the refresh is under way.
	JobRunning JobState = "running"
	// JobSucceeded: the refresh ran (Result set); its mode says whether
	// it committed (rebuild, incremental) or found nothing to do (no_op).
	// A no-op refresh is a succeeded job, as docs/control.md says: the
	// daemon has no state of its own for it.
	JobSucceeded JobState = "succeeded"
	// JobConflict: the refresh lost to a concurrent commit on the view
	// and wrote nothing (Error set).
	JobConflict JobState = "conflict"
	// JobFailed: the refresh failed and wrote nothing (Error set).
	JobFailed JobState = "failed"
	// JobCancelled: cancelled before it committed; it wrote nothing.
	JobCancelled JobState = "cancelled"
	// JobInterrupted: the daemon stopped (or died) while the job ran; the
	// view is at its previous version or at the job's result, never in
	// between.
	JobInterrupted JobState = "interrupted"
)

// Final reports whether s is an end state (no further change).
func (s JobState) Final() bool {
	switch s {
	case JobSucceeded, JobConflict, JobFailed, JobCancelled, JobInterrupted:
		return true
	}
	return false
}

// RefreshRequest is one refresh as a job runs it: the view and the
// options of REFRESH … WITH (…) or of `mvd view refresh`.
type RefreshRequest struct {
	// View is the view to refresh.
	View string `json:"view"`
	// Full forces a rebuild.
	Full bool `json:"full,omitempty"`
	// SourceVersion pins the source version (nil: the latest).
	SourceVersion *uint64 `json:"source_version,omitempty"`
	// Budget is the refresh's resource budget (LanceDB Enterprise's
	// cpu_millis, memory_bytes, gpu_count, gpu_class; nil fields are
	// options not given). Submit validates it (Budget.Validate) before
	// recording a job.
	Budget matview.Budget `json:"budget"`
}

// Options are the refresh options of r.
func (r RefreshRequest) Options() matview.RefreshOptions {
	return matview.RefreshOptions{Full: r.Full, SourceVersion: r.SourceVersion, Budget: r.Budget}
}

// Job is one asynchronous refresh as the daemon records it.
type Job struct {
	// ID names the job. IDs match [A-Za-z][A-Za-z0-9_]* so that SQL can
	// name them bare (DESCRIBE JOB j_01…); a quoted 'id' works too.
	ID string `json:"id"`
	// View is the refreshed view (Request.View).
	View string `json:"view"`
	// State is where the job is.
	State JobState `json:"state"`
	// Request is what was submitted.
	Request RefreshRequest `json:"request"`
	// SubmittedAt, StartedAt and EndedAt are when the job was submitted,
	// started and reached its final state (nil until then).
	SubmittedAt time.Time  `json:"submitted_at"`
	StartedAt   *time.Time `json:"started_at,omitempty"`
	EndedAt     *time.Time `json:"ended_at,omitempty"`
	// Result is the refresh's result (succeeded; its mode may be no_op).
	Result *matview.Result `json:"result,omitempty"`
	// Error says why the job failed, lost a conflict, was cancelled or
	// interrupted.
	Error string `json:"error,omitempty"`
}

// Jobs runs refreshes asynchronously: the daemon's job store, or a client
// of the daemon's HTTP API. An Executor with a nil Jobs refuses the
// statements that need one with ErrNoDaemon.
//
// Concurrency contract: every method is safe to call from many goroutines
// at once; each takes a context and returns when it is done (Wait: when
// the job is final or ctx is done, returning ctx's error then). Methods
// return copies: a Job returned never changes afterwards. Unknown IDs fail
// with an error wrapping ErrJobNotFound. Jobs never commits anything for a
// request it refuses (budget rules, unknown view): Submit returns that
// error and no job is recorded.
type Jobs interface {
	// Submit records a job for req and returns it at once (queued or
	// running); the refresh runs in the background.
	Submit(ctx context.Context, req RefreshRequest) (Job, error)
	// List returns the jobs, newest first; view, if not empty, keeps
	// only that view's.
	List(ctx context.Context, view string) ([]Job, error)
	// Get returns job id.
	Get(ctx context.Context, id string) (Job, error)
	// Cancel cancels job id and returns it in the state it ended in: a
	// job that committed before the cancel arrived stays succeeded (a
	// cancelled refresh commits nothing); cancelling a final job changes
	// nothing.
	Cancel(ctx context.Context, id string) (Job, error)
	// Wait blocks until job id is final and returns it.
	Wait(ctx context.Context, id string) (Job, error)
}
