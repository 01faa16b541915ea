package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/vfs"
)

// jobServer is a real serve process in this one (real matview views,
// real Badger; no NATS), with a hold on its jobs.
type jobServer struct {
	t    *testing.T
	cfg  daemon.Config
	srv  *daemon.Server
	base string
	stop func()
}

// startJobServer serves cfg's database until the test ends (or stop).
func startJobServer(t *testing.T, cfg daemon.Config, hold func(context.Context) error) *jobServer {
	t.Helper()
	deps, err := Deps(cfg, quietLog)
	if err != nil {
		t.Fatal(err)
	}
	deps.Bus = nil
	deps.JobHold = hold
	srv := daemon.NewServer(cfg, deps)
	drain, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(drain, context.Background()) }()
	stopped := false
	js := &jobServer{t: t, cfg: cfg, srv: srv}
	js.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		if err := deps.Close(); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(js.stop)
	select {
	case <-srv.Started():
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	js.base = "http://" + srv.Info().AdminAddr
	deadline := time.Now().Add(30 * time.Second)
	for ok, why := srv.Ready(); !ok; ok, why = srv.Ready() {
		if time.Now().After(deadline) {
			t.Fatalf("not ready: %s", why)
		}
		<-time.After(time.Millisecond)
	}
	return js
}

// do sends a request and decodes the JSON answer into out (if not nil);
// it returns the status.
func (s *jobServer) do(method, path, body string, out any) int {
	s.t.Helper()
	req, err := http.NewRequest(method, s.base+path, bytes.NewBufferString(body))
	if err != nil {
		s.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s %s: %s: %v", method, path, b, err)
		}
	}
	return resp.StatusCode
}

// submit submits an async refresh of view and returns the job's id.
func (s *jobServer) submit(view, body string) string {
	s.t.Helper()
	var r struct {
		JobID string `json:"job_id"`
	}
	if code := s.do("POST", "/v1/views/"+view+"/refresh", body, &r); code != http.StatusAccepted || r.JobID == "" {
		s.t.Fatalf("submit: %d %+v", code, r)
	}
	return r.JobID
}

// wait waits for job id to end.
func (s *jobServer) wait(id string) daemon.Job {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var j daemon.Job
		if code := s.do("POST", "/v1/jobs/"+id+"/wait?timeout=5s", "", &j); code != http.StatusOK {
			s.t.Fatalf("wait %s: %d", id, code)
		}
		if j.State.Done() {
			return j
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("job %s still %s", id, j.State)
		}
	}
}

// viewVersion is the view's latest version and its watermark.
func viewVersion(t *testing.T, dir, view string) (version, wm uint64) {
	t.Helper()
	db, err := matview.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v, err := db.OpenView(context.Background(), view)
	if err != nil {
		t.Fatal(err)
	}
	info, err := v.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.Version, info.Watermark.SourceVersion
}

// manualView makes table src (rows [0,n)) and a manual view v over it:
// only jobs refresh it.
func manualView(t *testing.T, dir string, n int64) {
	t.Helper()
	writeRows(t, filepath.Join(dir, "src.lance"), 0, n)
	db, err := matview.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pol := matview.Policy{Mode: matview.Manual}
	if _, err := db.CreateView(context.Background(), "v", "src", matview.Definition{}, matview.WithMetadata(pol.Metadata())); err != nil {
		t.Fatal(err)
	}
}

// TestJobSubmitWait: an async refresh answers a job id at once, the job
// ends succeeded with the refresh's result, which is the view's state;
// a job pinned to an older source version rebuilds to it; one of an
// unknown view is refused (404), one of a missing source version fails,
// budgets against the rules are refused (400) and record no job.
func TestJobSubmitWait(t *testing.T) {
	cfg := testConfig(t)
	manualView(t, cfg.DB, 10)
	s := startJobServer(t, cfg, nil)
	id := s.submit("v", `{"async":true}`)
	j := s.wait(id)
	version, wm := viewVersion(t, cfg.DB, "v")
	if j.State != daemon.JobSucceeded || j.Result == nil || j.Result.Mode != "rebuild" || j.Result.RowsWritten != 10 ||
		j.Result.Version != version || j.Result.SourceVersion != wm || j.View != "v" || j.StartedAt.IsZero() || j.EndedAt.IsZero() {
		t.Fatalf("job %+v (result %+v); view at version %d, watermark %d", j, j.Result, version, wm)
	}
	v2 := writeRows(t, filepath.Join(cfg.DB, "src.lance"), 10, 15)
	// A sync refresh answers the result itself.
	var res daemon.JobResult
	if code := s.do("POST", "/v1/views/v/refresh", `{}`, &res); code != http.StatusOK || res.Mode != "incremental" || res.RowsWritten != 5 || res.SourceVersion != v2 {
		t.Fatalf("sync refresh: %d %+v", code, res)
	}
	if j := s.wait(s.submit("v", `{"async":true,"source_version":1}`)); j.State != daemon.JobSucceeded || j.Result.Mode != "rebuild" || j.Result.SourceVersion != 1 {
		t.Fatalf("pinned job %+v (result %+v)", j, j.Result)
	}
	if j := s.wait(s.submit("v", `{"async":true,"source_version":99}`)); j.State != daemon.JobFailed || j.Error == "" {
		t.Fatalf("job of a missing source version: %+v", j)
	}
	var e struct {
		Error string `json:"error"`
		Code  int    `json:"code"`
	}
	if code := s.do("POST", "/v1/views/nope/refresh", `{"async":true}`, &e); code != http.StatusNotFound || e.Code != 1 || e.Error == "" {
		t.Fatalf("refresh of an unknown view: %d %+v", code, e)
	}
	if code := s.do("POST", "/v1/views/v/refresh", `{"async":true,"fast":true}`, &e); code != http.StatusBadRequest {
		t.Fatalf("unknown option: %d %+v", code, e)
	}
	for _, body := range []string{`{"async":true,"gpu_count":1}`, `{"async":true,"cpu_millis":1000}`, `{"async":true,"gpu_class":"a100"}`, `{"cpu_millis":-1,"memory_bytes":1,"gpu_count":0}`} {
		if code := s.do("POST", "/v1/views/v/refresh", body, &e); code != http.StatusBadRequest || e.Error == "" {
			t.Fatalf("refused budget %s: %d %+v", body, code, e)
		}
	}
	if code := s.do("GET", "/v1/jobs/nope", "", &e); code != http.StatusNotFound {
		t.Fatalf("unknown job: %d %+v", code, e)
	}
	var list []daemon.Job
	if code := s.do("GET", "/v1/jobs?view=v", "", &list); code != http.StatusOK || len(list) != 4 || list[0].State != daemon.JobFailed || list[3].ID != id {
		t.Fatalf("jobs of v: %d %+v", code, list)
	}
	// The history survives a restart.
	s.stop()
	s = startJobServer(t, cfg, nil)
	var again daemon.Job
	if code := s.do("GET", "/v1/jobs/"+id, "", &again); code != http.StatusOK || again.State != daemon.JobSucceeded || again.Result == nil || again.Result.Version != j.Result.Version || again.Result.Mode != j.Result.Mode {
		t.Fatalf("job after a restart: %d %+v", code, again)
	}
}

// TestJobCancel: a job cancelled while it runs ends cancelled and the
// view has no new version; one cancelled while queued never runs; a
// cancel of an ended job is refused (409).
func TestJobCancel(t *testing.T) {
	cfg := testConfig(t)
	manualView(t, cfg.DB, 10)
	held := make(chan struct{}, 4)
	hold := func(ctx context.Context) error {
		held <- struct{}{}
		<-ctx.Done() // only a cancel lets this job go
		return ctx.Err()
	}
	s := startJobServer(t, cfg, hold)
	before, _ := viewVersion(t, cfg.DB, "v")
	running := s.submit("v", `{"async":true}`)
	queued := s.submit("v", `{"async":true,"full":true}`)
	<-held
	var j daemon.Job
	if code := s.do("GET", "/v1/jobs/"+running, "", &j); code != http.StatusOK || j.State != daemon.JobRunning {
		t.Fatalf("held job: %d %+v", code, j)
	}
	if code := s.do("POST", "/v1/jobs/"+queued+"/cancel", "", &j); code != http.StatusOK || j.State != daemon.JobCancelled || !j.CancelRequested {
		t.Fatalf("cancel of a queued job: %d %+v", code, j)
	}
	if code := s.do("POST", "/v1/jobs/"+running+"/cancel", "", &j); code != http.StatusOK || !j.CancelRequested {
		t.Fatalf("cancel of a running job: %d %+v", code, j)
	}
	if j := s.wait(running); j.State != daemon.JobCancelled || j.Result != nil {
		t.Fatalf("cancelled job %+v", j)
	}
	if after, _ := viewVersion(t, cfg.DB, "v"); after != before {
		t.Fatalf("view at version %d after a cancelled job, was %d", after, before)
	}
	if j := s.wait(queued); j.State != daemon.JobCancelled || !j.StartedAt.IsZero() {
		t.Fatalf("job cancelled while queued: %+v", j)
	}
	var e struct {
		Code int `json:"code"`
	}
	if code := s.do("POST", "/v1/jobs/"+running+"/cancel", "", &e); code != http.StatusConflict || e.Code != 1 {
		t.Fatalf("cancel of an ended job: %d %+v", code, e)
	}
	if len(held) != 0 {
		t.Fatalf("the job cancelled while queued ran")
	}
}

// TestJobsConcurrent: 20 async refreshes of one view submitted at once,
// while the source takes commits and a refresher outside the daemon
// refreshes the same view: each job ends succeeded (any mode) or
// conflict, and no source step is committed to the view twice (its
// versions' watermarks only grow).
func TestJobsConcurrent(t *testing.T) {
	cfg := testConfig(t)
	manualView(t, cfg.DB, 10)
	s := startJobServer(t, cfg, nil)
	src := filepath.Join(cfg.DB, "src.lance")
	ids := make(chan string, 20)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { ids <- s.submit("v", `{"async":true}`) })
	}
	// Meanwhile: source commits, and refreshes of the view by another
	// refresher (a second process would do the same).
	other, err := matview.Open(cfg.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ov, err := other.OpenView(context.Background(), "v")
	if err != nil {
		t.Fatal(err)
	}
	for i := range int64(4) {
		writeRows(t, src, 10+i*3, 13+i*3)
		if _, err := ov.Refresh(context.Background(), matview.RefreshOptions{}); err != nil && !errors.Is(err, matview.ErrConflict) {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(ids)
	states := map[daemon.JobState]int{}
	for id := range ids {
		j := s.wait(id)
		states[j.State]++
		if j.State != daemon.JobSucceeded && j.State != daemon.JobConflict {
			t.Errorf("job %s ended %s: %s", id, j.State, j.Error)
		}
	}
	t.Logf("job states: %v", states)
	tbl, err := lance.Open(context.Background(), vfs.OS(), filepath.Join(cfg.DB, "v.lance"))
	if err != nil {
		t.Fatal(err)
	}
	latest, err := tbl.LatestVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var prev uint64
	for v := uint64(1); v <= latest; v++ {
		snap, err := tbl.Checkout(context.Background(), v)
		if err != nil {
			t.Fatal(err)
		}
		md := snap.Schema.Metadata[matview.KeySourceVersion]
		if md == "" {
			continue // the create
		}
		if op, err := snap.Operation(context.Background()); err == nil && op == lance.OpRewrite {
			continue // a compaction keeps the watermark
		}
		wm, err := strconv.ParseUint(md, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if wm <= prev {
			t.Errorf("view version %d reflects source version %d, as an earlier version does (%d): a source step committed twice", v, wm, prev)
		}
		prev = wm
	}
	if _, wm := viewVersion(t, cfg.DB, "v"); wm != 5 {
		t.Errorf("view at source version %d, want 5", wm)
	}
}

// TestJobRightAfterCreate: a job submitted the moment a view is created,
// before the watcher's next look at the database, waits for the daemon to
// take the view up and runs; it is not refused as "not served".
func TestJobRightAfterCreate(t *testing.T) {
	// Polling every 400ms: the view is created and its job submitted well
	// within one interval, so the daemon has not seen the view yet.
	cfg := testConfig(t, "--watch", "poll", "--poll-interval", "400ms")
	writeRows(t, filepath.Join(cfg.DB, "src.lance"), 0, 5)
	s := startJobServer(t, cfg, nil)
	db, err := matview.Open(cfg.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pol := matview.Policy{Mode: matview.Manual}
	if _, err := db.CreateView(context.Background(), "fresh", "src", matview.Definition{}, matview.WithMetadata(pol.Metadata())); err != nil {
		t.Fatal(err)
	}
	if j := s.wait(s.submit("fresh", `{"async":true}`)); j.State != daemon.JobSucceeded || j.Result == nil || j.Result.RowsWritten != 5 {
		t.Fatalf("job of a view created a moment ago: %+v", j)
	}
}
