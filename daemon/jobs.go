package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mvd-project/mvd/matview"
)

// JobState is where a refresh job is. A job is queued when submitted,
// running while its view's owner refreshes for it, and then ends in one
// of the other states, for good:
//
//   - succeeded: the refresh ran; its result says the mode (rebuild,
//     incremental or no_op) and the view version it left.
//   - conflict: another refresher (LanceDB, another daemon) committed the
//     same work first; nothing was written.
//   - failed: the refresh failed; nothing was written.
//   - cancelled: cancelled before its commit; nothing was written.
//   - interrupted: the daemon stopped (or died) while the job was queued
//     or running; the view is at its previous version or at the job's
//     result, whole (a view commit is atomic), never in between.
type JobState string

// The job states.
const (
	JobQueued      JobState = "queued"
	JobRunning     JobState = "running"
	JobSucceeded   JobState = "succeeded"
	JobConflict    JobState = "conflict"
	JobFailed      JobState = "failed"
	JobCancelled   JobState = "cancelled"
	JobInterrupted JobState = "interrupted"
)

// Done reports whether s is an end state.
func (s JobState) Done() bool { return s != JobQueued && s != JobRunning }

// JobRequest is what a refresh job was submitted with: the view and the
// options of `mvd view refresh` (the JSON of control.RefreshRequest).
type JobRequest struct {
	View string `json:"view"`
	// Full forces a rebuild.
	Full bool `json:"full,omitempty"`
	// SourceVersion pins the source version to reflect (nil: the latest).
	SourceVersion *uint64 `json:"source_version,omitempty"`
	// Budget caps the refresh's resources (validated at submission).
	Budget matview.Budget `json:"budget"`
}

// JobResult is what a job's refresh did: `mvd view refresh --json`'s
// object.
type JobResult struct {
	Mode          string   `json:"mode"`
	RowsWritten   uint64   `json:"rows_written"`
	SourceVersion uint64   `json:"source_version"`
	Version       uint64   `json:"version"`
	Warnings      []string `json:"warnings,omitempty"`
	// Reason says why a rebuild was needed. A job object carries it, so
	// that `mvd job wait` prints what `mvd view refresh` prints; a
	// synchronous refresh answers it in the Mvd-Reason header instead
	// (its body is view refresh --json's, which has no reason).
	Reason string `json:"reason,omitempty"`
}

// Job is a refresh job as the daemon reports and stores it (the JSON of
// control.Job, plus cancel_requested and note).
type Job struct {
	ID          string     `json:"id"`
	View        string     `json:"view"`
	State       JobState   `json:"state"`
	Request     JobRequest `json:"request"`
	SubmittedAt time.Time  `json:"submitted_at"`
	StartedAt   time.Time  `json:"started_at,omitzero"`
	EndedAt     time.Time  `json:"ended_at,omitzero"`
	// Result is set for a succeeded job.
	Result *JobResult `json:"result,omitempty"`
	// Error is why a job did not succeed.
	Error string `json:"error,omitempty"`
	// CancelRequested is set once a cancel was asked for; a job whose
	// commit had landed before it ends succeeded all the same.
	CancelRequested bool `json:"cancel_requested,omitempty"`
	// Note says more about how the job ended, when there is more to say.
	Note string `json:"note,omitempty"`
	// Instance is the --instance-id of the mvd serve that runs the job.
	Instance string `json:"instance,omitempty"`
}

// JobRecord is a job as a JobStore keeps it: Value is the Job's JSON,
// Seq the order of submission, Done whether it has ended.
type JobRecord struct {
	Seq   uint64
	Done  bool
	Value []byte
}

// JobStore keeps the job history (package checkpoint provides it, in the
// daemon's Badger store). PutJob is durable when it returns, and deletes
// the records of drop in the same write. Safe for concurrent use.
type JobStore interface {
	PutJob(ctx context.Context, r JobRecord, drop ...uint64) error
	Jobs(ctx context.Context) ([]JobRecord, error)
}

// Job errors, checkable with errors.Is.
var (
	// ErrJobNotFound: no job has that id (or it is past retention).
	ErrJobNotFound = errors.New("no such job")
	// ErrJobEnded: the job has ended already (a cancel comes too late).
	ErrJobEnded = errors.New("job has ended")
	// ErrViewNotServed: the daemon serves no view of that name.
	ErrViewNotServed = errors.New("view not served")
)

// jobRetention bounds the jobs kept; the oldest ended ones go first.
const jobRetention = 1000

// jobStoreTimeout bounds one write of a job's record.
const jobStoreTimeout = 10 * time.Second

// jobRun is one job in the daemon: its record, and what runs it.
type jobRun struct {
	seq  uint64
	job  Job                // under jobService.mu
	err  error              // the refresh's error, for the HTTP status
	stop context.CancelFunc // cancels the running refresh
	done chan struct{}      // closed when the job ends
}

// jobService keeps the daemon's refresh jobs: submitted to a view's
// owner, which runs them between its own refreshes (so a job and an
// auto-refresh never commit the same source step twice), recorded in the
// JobStore at every state transition.
type jobService struct {
	store JobStore // nil: kept in memory only
	log   *slog.Logger
	now   func() time.Time
	// hold, if set, runs when a job starts, before its refresh: tests
	// use it to keep a job running (see jobHoldFile).
	hold func(ctx context.Context) error
	// retention is how many jobs are kept (jobRetention).
	retention int
	// instance is this daemon's --instance-id, recorded in its jobs.
	instance string

	mu    sync.Mutex
	byID  map[string]*jobRun
	order []*jobRun // by seq
	next  uint64
}

func newJobService(store JobStore, log *slog.Logger) *jobService {
	return &jobService{store: store, log: log, now: time.Now, retention: jobRetention, byID: map[string]*jobRun{}, next: 1}
}

// load reads the kept jobs; those queued or running when the daemon
// stopped are interrupted now (and recorded so).
func (js *jobService) load(ctx context.Context) error {
	if js.store == nil {
		return nil
	}
	recs, err := js.store.Jobs(ctx)
	if err != nil {
		return fmt.Errorf("read refresh jobs: %w", err)
	}
	js.mu.Lock()
	defer js.mu.Unlock()
	for _, rec := range recs {
		r := &jobRun{seq: rec.Seq, done: make(chan struct{})}
		if err := json.Unmarshal(rec.Value, &r.job); err != nil {
			js.log.Warn("refresh job record unreadable; skipped", "seq", rec.Seq, "err", err)
			continue
		}
		if !r.job.State.Done() {
			r.job.Error = fmt.Sprintf("the daemon stopped while the job was %s; the view is at its previous version or at the job's result, whole", r.job.State)
			r.job.State, r.job.EndedAt = JobInterrupted, js.now().UTC()
			js.save(r)
		}
		close(r.done)
		js.byID[r.job.ID] = r
		js.order = append(js.order, r)
		js.next = max(js.next, rec.Seq+1)
	}
	return nil
}

// newJobID is "j_" and 16 random hex digits: an identifier SQL can name
// bare (DESCRIBE JOB j_…).
func newJobID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("job id: %w", err)
	}
	return "j_" + hex.EncodeToString(b[:]), nil
}

// add records a new queued job; the caller hands it to its view's owner.
func (js *jobService) add(req JobRequest) (Job, *jobRun, error) {
	id, err := newJobID()
	if err != nil {
		return Job{}, nil, err
	}
	js.mu.Lock()
	defer js.mu.Unlock()
	r := &jobRun{seq: js.next, done: make(chan struct{}),
		job: Job{ID: id, View: req.View, State: JobQueued, Request: req, SubmittedAt: js.now().UTC(), Instance: js.instance}}
	drop := js.beyondRetention()
	if err := js.put(r, drop); err != nil {
		return Job{}, nil, err // not queued: nothing will run, nothing dropped
	}
	js.forget(len(drop))
	js.next++
	js.byID[id] = r
	js.order = append(js.order, r)
	return r.job, r, nil
}

// beyondRetention returns the seqs of the oldest ended jobs beyond the
// retention, one more job being about to be added (js.mu held).
func (js *jobService) beyondRetention() []uint64 {
	var drop []uint64
	excess := len(js.order) + 1 - js.retention
	for _, r := range js.order {
		if excess <= 0 {
			break
		}
		if r.job.State.Done() {
			drop = append(drop, r.seq)
			excess--
		}
	}
	return drop
}

// forget removes the n oldest ended jobs (beyondRetention's, once their
// records are deleted; js.mu held).
func (js *jobService) forget(n int) {
	kept := js.order[:0]
	for _, r := range js.order {
		if n > 0 && r.job.State.Done() {
			delete(js.byID, r.job.ID)
			n--
			continue
		}
		kept = append(kept, r)
	}
	clear(js.order[len(kept):])
	js.order = kept
}

// put writes r's record (js.mu held: a job's transitions are written in
// order).
func (js *jobService) put(r *jobRun, drop []uint64) error {
	if js.store == nil {
		return nil
	}
	val, err := json.Marshal(&r.job)
	if err != nil {
		return fmt.Errorf("encode job %s: %w", r.job.ID, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), jobStoreTimeout)
	defer cancel()
	if err := js.store.PutJob(ctx, JobRecord{Seq: r.seq, Done: r.job.State.Done(), Value: val}, drop...); err != nil {
		return fmt.Errorf("record job %s: %w", r.job.ID, err)
	}
	return nil
}

// save writes r's record after a transition; a failure is logged (the
// job goes on: its view's own commit is the record that matters).
func (js *jobService) save(r *jobRun) {
	if err := js.put(r, nil); err != nil {
		js.log.Warn("refresh job state not recorded", "job", r.job.ID, "state", r.job.State, "err", err)
	}
}

// start marks r running and returns the context its refresh runs under
// (cancelled by a cancel of the job, or with parent); ok is false if r
// was cancelled while queued.
func (js *jobService) start(r *jobRun, parent context.Context) (ctx context.Context, ok bool) {
	js.mu.Lock()
	defer js.mu.Unlock()
	if r.job.State != JobQueued {
		return nil, false
	}
	ctx, r.stop = context.WithCancel(parent)
	r.job.State, r.job.StartedAt = JobRunning, js.now().UTC()
	js.save(r)
	return ctx, true
}

// finish ends r in state st.
func (js *jobService) finish(r *jobRun, st JobState, res *JobResult, err error, note string) {
	js.mu.Lock()
	defer js.mu.Unlock()
	if r.job.State.Done() {
		return
	}
	r.job.State, r.job.EndedAt, r.job.Result, r.job.Note, r.err = st, js.now().UTC(), res, note, err
	if err != nil {
		r.job.Error = err.Error()
	}
	if r.stop != nil {
		r.stop()
	}
	js.save(r)
	close(r.done)
}

// get returns the job id.
func (js *jobService) get(id string) (Job, error) {
	js.mu.Lock()
	r := js.byID[id]
	var j Job
	if r != nil {
		j = r.job
	}
	js.mu.Unlock()
	if r != nil {
		return j, nil
	}
	if j, ok, err := js.foreignJob(context.Background(), id); err != nil || ok {
		return j, err
	}
	return Job{}, fmt.Errorf("job %s: %w", id, ErrJobNotFound)
}

// list returns the jobs of view (every job for ""), newest first: this
// instance's, and with a SharedJobStore the other instances' too.
func (js *jobService) list(view string) []Job {
	js.mu.Lock()
	out := []Job{}
	for i := len(js.order) - 1; i >= 0; i-- {
		if r := js.order[i]; view == "" || r.job.View == view {
			out = append(out, r.job)
		}
	}
	js.mu.Unlock()
	return js.withForeign(view, out)
}

// wait blocks until job id ends, ctx is done or timeout passes, and
// returns the job as it then is (with the refresh's error, if it ended
// with one).
func (js *jobService) wait(ctx context.Context, id string, timeout time.Duration) (Job, error, error) {
	js.mu.Lock()
	r := js.byID[id]
	js.mu.Unlock()
	if r == nil {
		j, err := js.waitForeign(ctx, id, timeout)
		return j, nil, err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-r.done:
	case <-ctx.Done():
	case <-t.C:
	}
	js.mu.Lock()
	defer js.mu.Unlock()
	return r.job, r.err, nil
}

// cancel cancels job id: a queued job ends cancelled at once; a running
// one has its refresh's context cancelled and ends when the refresh
// returns (cancelled, or succeeded if its commit had landed).
func (js *jobService) cancel(id string) (Job, error) {
	js.mu.Lock()
	r := js.byID[id]
	if r == nil {
		js.mu.Unlock()
		if j, ok, _ := js.foreignJob(context.Background(), id); ok {
			return j, fmt.Errorf("job %s is another instance's (%s): cancel it there: %w", id, j.Instance, ErrJobNotFound)
		}
		return Job{}, fmt.Errorf("job %s: %w", id, ErrJobNotFound)
	}
	if r.job.State.Done() {
		j := r.job
		js.mu.Unlock()
		return j, fmt.Errorf("job %s is %s: %w", id, j.State, ErrJobEnded)
	}
	r.job.CancelRequested = true
	if r.job.State == JobQueued {
		js.mu.Unlock()
		js.finish(r, JobCancelled, nil, errors.New("cancelled before it ran; nothing was committed"), "")
		return js.get(id)
	}
	js.save(r)
	r.stop()
	j := r.job
	js.mu.Unlock()
	return j, nil
}
