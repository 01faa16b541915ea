package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/matview"
)

// badgerJobs is the JobStore of package wire, over a real Badger store.
type badgerJobs struct{ s *checkpoint.Store }

func (b badgerJobs) PutJob(ctx context.Context, r JobRecord, drop ...uint64) error {
	return b.s.PutJob(ctx, checkpoint.JobEntry{Seq: r.Seq, Done: r.Done, Value: r.Value}, drop...)
}

func (b badgerJobs) Jobs(ctx context.Context) ([]JobRecord, error) {
	es, err := b.s.Jobs(ctx)
	out := make([]JobRecord, len(es))
	for i, e := range es {
		out[i] = JobRecord{Seq: e.Seq, Done: e.Done, Value: e.Value}
	}
	return out, err
}

// TestJobRetention: beyond the retention the oldest ended jobs are
// deleted, in the store as in memory, and a job still queued is kept
// however old; after a restart the queued and running ones are
// interrupted.
func TestJobRetention(t *testing.T) {
	dir := t.TempDir()
	store, err := checkpoint.Open(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	js := newJobService(badgerJobs{store}, log)
	js.retention = 3
	add := func() *jobRun {
		t.Helper()
		_, r, err := js.add(JobRequest{View: "v"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	old := add() // stays queued
	var ended []*jobRun
	for range 4 {
		r := add()
		js.finish(r, JobSucceeded, &JobResult{Mode: "no_op"}, nil, "")
		ended = append(ended, r)
	}
	running := add()
	if _, ok := js.start(running, context.Background()); !ok {
		t.Fatal("start")
	}
	want := []string{running.job.ID, ended[3].job.ID, old.job.ID}
	check := func(js *jobService, states ...JobState) {
		t.Helper()
		list := js.list("")
		if len(list) != len(want) {
			t.Fatalf("jobs %+v, want %v", list, want)
		}
		for i, j := range list {
			if j.ID != want[i] || j.State != states[i] {
				t.Fatalf("job %d: %s %s, want %s %s", i, j.ID, j.State, want[i], states[i])
			}
		}
		if _, err := js.get(ended[0].job.ID); !errors.Is(err, ErrJobNotFound) {
			t.Fatalf("oldest ended job: %v, want ErrJobNotFound", err)
		}
	}
	check(js, JobRunning, JobSucceeded, JobQueued)
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	store, err = checkpoint.Open(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	again := newJobService(badgerJobs{store}, log)
	if err := again.load(context.Background()); err != nil {
		t.Fatal(err)
	}
	check(again, JobInterrupted, JobSucceeded, JobInterrupted)
	if _, err := again.cancel(old.job.ID); !errors.Is(err, ErrJobEnded) {
		t.Fatalf("cancel of an interrupted job: %v", err)
	}
}

// TestSyncRefreshOutlivesWriteTimeout: a synchronous refresh answers its
// result however long the refresh took, though the admin server's write
// timeout (here 1ns) has long passed.
func TestSyncRefreshOutlivesWriteTimeout(t *testing.T) {
	root := createTable(t, t.TempDir(), "src")
	log := slog.New(slog.DiscardHandler)
	s := &Server{log: log, owners: map[string]*ownerHandle{}, jobs: newJobService(nil, log)}
	o := newOwner(ownerConfig{View: "v", Refresher: &sourceRefresher{root: root}, Policy: matview.Policy{Mode: matview.Manual}, Logger: log, jobs: s.jobs})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		o.Run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	s.owners["v"] = &ownerHandle{owner: o}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/views/{view}/refresh", s.handleRefresh)
	ts := httptest.NewUnstartedServer(mux)
	ts.Config.WriteTimeout = time.Nanosecond
	ts.Start()
	defer ts.Close()
	resp, err := http.Post(ts.URL+"/v1/views/v/refresh", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatalf("sync refresh: %v", err)
	}
	defer resp.Body.Close()
	var res JobResult
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != http.StatusOK || res.Mode != "incremental" {
		t.Fatalf("sync refresh: %d %+v %v", resp.StatusCode, res, err)
	}
}

// blockedMaintainer is a sourceRefresher whose maintenance step waits
// until released.
type blockedMaintainer struct {
	*sourceRefresher
	entered, release chan struct{}
}

func (m blockedMaintainer) Maintain(ctx context.Context) (Maintenance, error) {
	m.entered <- struct{}{}
	select {
	case <-m.release:
	case <-ctx.Done():
	}
	return Maintenance{}, nil
}

// TestJobEndsBeforeMaintenance: a job ends with its refresh's commit,
// not after the maintenance step the idle owner runs next; and a second
// job waiting goes before any maintenance step.
func TestJobEndsBeforeMaintenance(t *testing.T) {
	root := createTable(t, t.TempDir(), "src")
	log := slog.New(slog.DiscardHandler)
	js := newJobService(nil, log)
	m := blockedMaintainer{&sourceRefresher{root: root}, make(chan struct{}, 4), make(chan struct{})}
	o := newOwner(ownerConfig{View: "v", Refresher: m, Policy: matview.Policy{Mode: matview.Manual}, Logger: log, jobs: js})
	hold := make(chan struct{})
	js.hold = func(ctx context.Context) error {
		<-hold
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		o.Run(ctx)
	}()
	defer func() {
		close(m.release)
		cancel()
		<-done
	}()
	submit := func() *jobRun {
		_, r, err := js.add(JobRequest{View: "v"})
		if err != nil {
			t.Fatal(err)
		}
		o.submitJob(r, r.job.Request)
		return r
	}
	first := submit()
	second := submit()
	hold <- struct{}{} // the first job runs
	hold <- struct{}{} // the second one too: no maintenance between them
	for _, r := range []*jobRun{first, second} {
		j, _, err := js.wait(context.Background(), r.job.ID, time.Minute)
		if err != nil || j.State != JobSucceeded {
			t.Fatalf("job %+v, %v; want it succeeded while maintenance waits", j, err)
		}
	}
	<-m.entered // then the idle owner maintains
}

// TestJobNotRecordedDropsNothing: a job whose record cannot be written
// is refused, and the ended jobs retention would have deleted with it
// stay (in memory as in the store).
func TestJobNotRecordedDropsNothing(t *testing.T) {
	store, err := checkpoint.Open(t.TempDir(), checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	js := newJobService(badgerJobs{store}, slog.New(slog.DiscardHandler))
	js.retention = 2
	for range 2 {
		_, r, err := js.add(JobRequest{View: "v"})
		if err != nil {
			t.Fatal(err)
		}
		js.finish(r, JobSucceeded, &JobResult{Mode: "no_op"}, nil, "")
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := js.add(JobRequest{View: "v"}); !errors.Is(err, checkpoint.ErrClosed) {
		t.Fatalf("add with the store closed: %v, want ErrClosed", err)
	}
	if list := js.list(""); len(list) != 2 {
		t.Fatalf("jobs after a refused add: %+v, want the 2 ended ones", list)
	}
}
