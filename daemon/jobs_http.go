package daemon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mvd-project/mvd/control/httpapi"
	"github.com/mvd-project/mvd/matview"
)

// jobWaitMax bounds one wait request (POST /v1/jobs/{id}/wait): below the
// admin server's write timeout, so that the answer always gets out; a
// client waiting longer asks again.
const jobWaitMax = 20 * time.Second

// refreshRequest is the body of POST /v1/views/{view}/refresh: the
// options of `mvd view refresh`, named as in SQL's WITH (…).
type refreshRequest struct {
	Full          bool    `json:"full"`
	SourceVersion *uint64 `json:"source_version"`
	Async         bool    `json:"async"`
	CPUMillis     *int64  `json:"cpu_millis"`
	MemoryBytes   *int64  `json:"memory_bytes"`
	GPUCount      *int64  `json:"gpu_count"`
	GPUClass      *string `json:"gpu_class"`
}

// jobRoutes are the refresh and job endpoints of the control API.
func (s *Server) jobRoutes() []route {
	return []route{
		{"POST /v1/views/{view}/refresh", http.HandlerFunc(s.handleRefresh)},
		{"GET /v1/jobs", http.HandlerFunc(s.handleJobs)},
		{"GET /v1/jobs/{id}", http.HandlerFunc(s.handleJob)},
		{"POST /v1/jobs/{id}/wait", http.HandlerFunc(s.handleJobWait)},
		{"POST /v1/jobs/{id}/cancel", http.HandlerFunc(s.handleJobCancel)},
	}
}

// ownerWait bounds how long a job of a view the catalog lists waits for
// the watcher to take the view up: one created a moment ago (mvd view
// create, then at once --async) is served within a poll interval.
const ownerWait = 10 * time.Second

// submitJob queues a refresh job of view with its owner.
func (s *Server) submitJob(ctx context.Context, req JobRequest) (Job, *jobRun, error) {
	view := req.View
	if err := req.Budget.Validate(); err != nil {
		return Job{}, nil, fmt.Errorf("refresh view %s: %w", view, err)
	}
	h, err := s.ownerFor(ctx, view)
	if err != nil {
		return Job{}, nil, err
	}
	j, r, err := s.jobs.add(req)
	if err != nil {
		return Job{}, nil, err
	}
	h.owner.submitJob(r, req)
	return j, r, nil
}

// ownerFor is view's owner. A view the catalog lists that has no owner yet
// is one the watcher has not seen: it is waited for (up to ownerWait), not
// refused, so that a job submitted right after the view's creation runs.
func (s *Server) ownerFor(ctx context.Context, view string) (*ownerHandle, error) {
	owner := func() *ownerHandle {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.owners[view]
	}
	if h := owner(); h != nil {
		return h, nil
	}
	notServed := fmt.Errorf("view %s: %w by this daemon (not a materialized view of its database)", view, ErrViewNotServed)
	if s.deps.Catalog == nil {
		return nil, notServed
	}
	if _, ok, err := s.deps.Catalog.View(ctx, view); err != nil {
		return nil, fmt.Errorf("view %s: %w", view, err)
	} else if !ok {
		return nil, notServed
	}
	ctx, cancel := context.WithTimeout(ctx, ownerWait)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	polls := 0
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("view %s: %w by this daemon yet: it is a view of its database, not taken up within %s (see the daemon's log)", view, ErrViewNotServed, ownerWait)
		case <-tick.C:
		}
		if h := owner(); h != nil {
			return h, nil
		}
		if polls++; polls%ownedElsewherePolls == 1 {
			if err := s.ownedElsewhere(ctx, view); err != nil {
				return nil, err
			}
		}
	}
}

// handleRefresh is POST /v1/views/{view}/refresh: with "async": true it
// answers 202 {"job_id": …} at once; otherwise it answers the refresh's
// result (`mvd view refresh --json`'s object) when the job ends. Either
// way the refresh runs through the view's owner, as a job.
func (s *Server) handleRefresh(w http.ResponseWriter, r *http.Request) {
	var req refreshRequest
	if err := decodeRefresh(r, &req); err != nil {
		apiFail(w, err)
		return
	}
	j, run, err := s.submitJob(r.Context(), JobRequest{View: r.PathValue("view"), Full: req.Full, SourceVersion: req.SourceVersion,
		Budget: matview.Budget{CPUMillis: req.CPUMillis, MemoryBytes: req.MemoryBytes, GPUCount: req.GPUCount, GPUClass: req.GPUClass}})
	if err != nil {
		apiFail(w, err)
		return
	}
	if req.Async {
		httpapi.WriteJSON(w, http.StatusAccepted, map[string]string{"job_id": j.ID})
		return
	}
	select {
	case <-run.done:
	case <-r.Context().Done():
		return // the client is gone; the job goes on
	}
	// A refresh may take longer than the server's write timeout: the
	// answer's deadline starts when the job ends, not with the request.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(defaultAdminLimits.write))
	j, jerr, err := s.jobs.wait(r.Context(), j.ID, 0)
	if err != nil {
		apiFail(w, err)
		return
	}
	if j.State != JobSucceeded {
		failJob(w, j, jerr)
		return
	}
	var res JobResult
	if j.Result != nil {
		res = *j.Result
	}
	if res.Reason != "" {
		w.Header().Set(httpapi.ReasonHeader, httpapi.OneLine(res.Reason))
		res.Reason = "" // the body is view refresh --json's shape
	}
	httpapi.WriteJSON(w, http.StatusOK, &res)
}

// handleJobs is GET /v1/jobs[?view=NAME]: the kept jobs, newest first.
func (s *Server) handleJobs(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, s.jobs.list(r.URL.Query().Get("view")))
}

// handleJob is GET /v1/jobs/{id}.
func (s *Server) handleJob(w http.ResponseWriter, r *http.Request) {
	j, err := s.jobs.get(r.PathValue("id"))
	if err != nil {
		apiFail(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
}

// handleJobWait is POST /v1/jobs/{id}/wait?timeout=D: the job once it has
// ended, or as it is after D (default and at most jobWaitMax); the
// client tells which by its state.
func (s *Server) handleJobWait(w http.ResponseWriter, r *http.Request) {
	timeout := jobWaitMax
	if q := r.URL.Query().Get("timeout"); q != "" {
		d, err := time.ParseDuration(q)
		if err != nil || d < 0 {
			apiFail(w, httpapi.Usagef("timeout %q: want a duration such as 30s", q))
			return
		}
		timeout = min(d, jobWaitMax)
	}
	j, _, err := s.jobs.wait(r.Context(), r.PathValue("id"), timeout)
	if err != nil {
		apiFail(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
}

// handleJobCancel is POST /v1/jobs/{id}/cancel: the job as it is after
// the cancel (cancelled, or running with cancel_requested until its
// refresh returns); 409 if it had ended already.
func (s *Server) handleJobCancel(w http.ResponseWriter, r *http.Request) {
	j, err := s.jobs.cancel(r.PathValue("id"))
	if err != nil {
		apiFail(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
}

// apiFail answers a job or refresh error in the control API's shape
// ({"error","code"}, code the CLI's exit status).
func apiFail(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrJobNotFound), errors.Is(err, ErrViewNotServed):
		httpapi.WriteError(w, http.StatusNotFound, exitFailure, err)
	case errors.Is(err, ErrJobEnded):
		httpapi.WriteError(w, http.StatusConflict, exitFailure, err)
	default:
		httpapi.Fail(w, err)
	}
}

// exitFailure is the CLI's exit status of a failure.
const exitFailure = 1

// failJob answers a job that ended without success: a conflict as
// matview's (409, exit 3), a failure as its error, a cancelled or
// interrupted job 503.
func failJob(w http.ResponseWriter, j Job, err error) {
	msg := fmt.Errorf("job %s %s: %s", j.ID, j.State, j.Error)
	switch {
	case j.State == JobConflict:
		httpapi.WriteError(w, http.StatusConflict, 3, msg)
	case j.State == JobCancelled || j.State == JobInterrupted:
		httpapi.WriteError(w, http.StatusServiceUnavailable, exitFailure, msg)
	case err != nil:
		status, code := httpapi.Classify(err)
		httpapi.WriteError(w, status, code, msg)
	default:
		httpapi.WriteError(w, http.StatusInternalServerError, exitFailure, msg)
	}
}

// decodeRefresh decodes a refresh request's body; an empty body is a
// refresh with no options.
func decodeRefresh(r *http.Request, req *refreshRequest) error {
	if r.ContentLength == 0 {
		return nil
	}
	return httpapi.DecodeBody(r, req)
}
