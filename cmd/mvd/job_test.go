package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/serveinfo"
)

// serveProc is a real `mvd serve` process.
type serveProc struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	done   chan error
}

// startServe runs bin serve on dir with env added, and waits until it is
// ready (serve.json written, /readyz 200).
func startServe(t *testing.T, bin, dir string, env ...string) *serveProc {
	t.Helper()
	p := &serveProc{stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(bin, "serve", "--db", dir, "--admin-addr", "127.0.0.1:0", "--create-grace", "0")
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(p.kill)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if info, err := serveinfo.Read(filepath.Join(dir, ".mvd")); err == nil && info.PID == p.cmd.Process.Pid {
			if resp, err := http.Get("http://" + info.AdminAddr + "/readyz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return p
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve not ready:\n%s", p.stderr.String())
		}
		<-time.After(5 * time.Millisecond)
	}
}

// kill stops the process with SIGKILL (no drain, no cleanup of its own).
func (p *serveProc) kill() {
	_ = p.cmd.Process.Kill()
	if err, ok := <-p.done; ok {
		p.done <- err
	}
}

// jobJSON runs `mvd job show --json` and decodes it.
func jobJSON(t *testing.T, dir, id string) daemon.Job {
	t.Helper()
	code, out, errOut := runCLI("job", "show", "--db", dir, id, "--json")
	var j daemon.Job
	if code != 0 || json.Unmarshal([]byte(out), &j) != nil {
		t.Fatalf("job show %s: exit %d, %s %s", id, code, out, errOut)
	}
	return j
}

// submitAsync runs `mvd view refresh --async` and returns the job id.
func submitAsync(t *testing.T, dir string, args ...string) string {
	t.Helper()
	code, out, errOut := runCLI(append([]string{"view", "refresh", "--db", dir, "v", "--async"}, args...)...)
	var r map[string]string
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || len(r) != 1 || !strings.HasPrefix(r["job_id"], "j_") {
		t.Fatalf("view refresh --async: exit %d, %q %s", code, out, errOut)
	}
	return r["job_id"]
}

// waitRunning polls job id until it is running.
func waitRunning(t *testing.T, dir, id string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for jobJSON(t, dir, id).State != daemon.JobRunning {
		if time.Now().After(deadline) {
			t.Fatalf("job %s never ran", id)
		}
		<-time.After(5 * time.Millisecond)
	}
}

// viewAt is the view's latest version and the source version it reflects.
func viewAt(t *testing.T, dir string) (version, wm uint64) {
	t.Helper()
	code, out, errOut := runCLI("view", "show", "--db", dir, "v", "--json")
	var s struct {
		Version   uint64 `json:"version"`
		Watermark struct {
			SourceVersion uint64 `json:"source_version"`
			ViewVersion   uint64 `json:"view_version"`
		} `json:"watermark"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &s) != nil {
		t.Fatalf("view show: exit %d, %s %s", code, out, errOut)
	}
	return s.Watermark.ViewVersion, s.Watermark.SourceVersion
}

// TestJobCLI drives async refresh jobs through the CLI against a real
// mvd serve: without a daemon --async and the job commands exit 1 and
// commit nothing; submit → wait prints the refresh's result; a job held
// running is cancelled and commits nothing; wait --timeout gives up with
// exit 1; kill -9 of the daemon under a running job leaves the job
// interrupted after the restart and the view whole at its previous
// version (LanceDB reads it equal to its definition at its watermark).
func TestJobCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	lancedbtest.Require(t)
	bin := mvdBinary(t)
	dir := viewDB(t)
	if code, _, errOut := runCLI("view", "create", "--db", dir, "v", "--source", "src", "--auto-refresh", "manual"); code != 0 {
		t.Fatalf("view create: %s", errOut)
	}
	created, _ := viewAt(t, dir)
	for _, args := range [][]string{
		{"view", "refresh", "--db", dir, "v", "--async"},
		{"job", "wait", "--db", dir, "j_1"},
		{"job", "list", "--db", dir},
		{"job", "show", "--db", dir, "j_1"},
		{"job", "cancel", "--db", dir, "j_1"},
		{"sql", "--db", dir, "REFRESH MATERIALIZED VIEW v WITH (async = true)"},
		{"sql", "--db", dir, "SHOW JOBS"},
	} {
		code, out, errOut := runCLI(args...)
		if code != 1 || out != "" || !strings.Contains(errOut, "start `mvd serve") {
			t.Errorf("%v without a daemon: exit %d, %q %q", args, code, out, errOut)
		}
	}
	if v, _ := viewAt(t, dir); v != created {
		t.Fatalf("view at version %d after refused async refreshes, created at %d", v, created)
	}
	hold := filepath.Join(t.TempDir(), "hold")
	srv := startServe(t, bin, dir, "MVD_TEST_JOB_HOLD="+hold)
	id := submitAsync(t, dir)
	code, out, errOut := runCLI("job", "wait", "--db", dir, id, "--json")
	var res map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res["mode"] != "rebuild" || len(res) != 4 {
		t.Fatalf("job wait --json: exit %d, %s %s", code, out, errOut)
	}
	version, wm := viewAt(t, dir)
	if res["version"] != float64(version) || res["source_version"] != float64(wm) {
		t.Fatalf("job result %v; the view is at version %d, source version %d", res, version, wm)
	}
	// job wait prints what view refresh prints, the rebuild's reason too.
	want := fmt.Sprintf("refreshed v: rebuild, %v rows written, source version %d, view version %d (first refresh)\n", res["rows_written"], wm, version)
	if code, out, _ := runCLI("job", "wait", "--db", dir, id); code != 0 || out != want {
		t.Errorf("job wait: exit %d, %q, want %q", code, out, want)
	}
	if j := jobJSON(t, dir, id); j.Result == nil || j.Result.Reason != "first refresh" {
		t.Errorf("job show --json: %+v, want its result's reason", j.Result)
	}
	first := version
	for _, asJSON := range []bool{false, true} {
		args := []string{"--full"}
		if asJSON {
			args = append(args, "--json")
		}
		code, syncOut, errOut := runCLI(append([]string{"view", "refresh", "--db", dir, "v"}, args...)...)
		if code != 0 {
			t.Fatalf("view refresh %v: exit %d, %s", args, code, errOut)
		}
		id := submitAsync(t, dir, "--full")
		code, out, errOut := runCLI(append([]string{"job", "wait", "--db", dir, id}, args[1:]...)...)
		v, _ := viewAt(t, dir)
		// The two refreshes differ only in the view version they made.
		syncOut = strings.Replace(syncOut, fmt.Sprintf("view version %d", v-1), fmt.Sprintf("view version %d", v), 1)
		syncOut = strings.Replace(syncOut, fmt.Sprintf(`"version":%d}`, v-1), fmt.Sprintf(`"version":%d}`, v), 1)
		if code != 0 || out != syncOut || !strings.Contains(out, "full refresh requested") == !asJSON {
			t.Errorf("job wait %v: exit %d, %q %s; view refresh printed %q", args[1:], code, out, errOut, syncOut)
		}
	}
	version, wm = viewAt(t, dir)
	if j := jobJSON(t, dir, id); j.State != daemon.JobSucceeded || j.View != "v" || j.Result == nil || j.Result.Version != first {
		t.Errorf("job show: %+v", j)
	}
	if code, out, _ := runCLI("job", "show", "--db", dir, id); code != 0 || !strings.Contains(out, "state:      succeeded") || !strings.Contains(out, "result:     rebuild, ") {
		t.Errorf("job show: exit %d, %q", code, out)
	}
	if code, out, _ := runCLI("job", "list", "--db", dir); code != 0 || !strings.HasPrefix(out, "ID ") || !strings.Contains(out, id+"  v     succeeded") {
		t.Errorf("job list: exit %d, %q", code, out)
	}
	if code, out, _ := runCLI("job", "list", "--db", dir, "--view", "w", "--json"); code != 0 || out != "[]\n" {
		t.Errorf("job list --view w --json: exit %d, %q", code, out)
	}
	if code, _, errOut := runCLI("job", "show", "--db", dir, "j_0"); code != 1 || !strings.Contains(errOut, "no such job") {
		t.Errorf("job show of an unknown job: exit %d, %q", code, errOut)
	}
	// mvd sql's job statements go to the same jobs.
	code, out, errOut = runCLI("sql", "--db", dir, "REFRESH MATERIALIZED VIEW v WITH (async = true)", "--json")
	var sub struct {
		ID string `json:"job_id"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &sub) != nil || !strings.HasPrefix(sub.ID, "j_") {
		t.Fatalf("sql async refresh: exit %d, %s %s", code, out, errOut)
	}
	if j := jobJSON(t, dir, sub.ID); j.View != "v" {
		t.Errorf("job of the SQL refresh: %+v", j)
	}
	for _, stmt := range []string{"SHOW JOBS", "DESCRIBE JOB " + sub.ID} {
		if code, out, errOut := runCLI("sql", "--db", dir, stmt); code != 0 || !strings.Contains(out, sub.ID) {
			t.Errorf("sql %s: exit %d, %s %s", stmt, code, out, errOut)
		}
	}
	if code, out, _ := runCLI("job", "wait", "--db", dir, sub.ID); code != 0 || !strings.HasPrefix(out, "refreshed v: no_op") {
		t.Errorf("job wait of the SQL refresh: exit %d, %q", code, out)
	}
	// Cancel: the job is held running; it ends cancelled, nothing committed.
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	id = submitAsync(t, dir, "--full")
	waitRunning(t, dir, id)
	if code, out, errOut := runCLI("job", "wait", "--db", dir, id, "--timeout", "50ms"); code != 1 || out != "" || !strings.Contains(errOut, "still running after 50ms") {
		t.Errorf("job wait --timeout: exit %d, %q %q", code, out, errOut)
	}
	if code, out, errOut := runCLI("job", "cancel", "--db", dir, id); code != 0 || !strings.Contains(out, "cancelled job "+id) {
		t.Fatalf("job cancel: exit %d, %q %q", code, out, errOut)
	}
	if code, _, errOut := runCLI("job", "wait", "--db", dir, id); code != 1 || !strings.Contains(errOut, "cancelled") {
		t.Errorf("job wait of a cancelled job: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCLI("job", "cancel", "--db", dir, id); code != 1 || !strings.Contains(errOut, "has ended") {
		t.Errorf("second cancel: exit %d, %q", code, errOut)
	}
	if v, _ := viewAt(t, dir); v != version {
		t.Fatalf("view at version %d after a cancelled job, was %d", v, version)
	}
	code, out, _ = runCLI("job", "list", "--db", dir, "--view", "v", "--json")
	var list []daemon.Job
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 7 || list[0].State != daemon.JobCancelled || list[1].ID == "" {
		t.Errorf("job list --json: exit %d, %s", code, out)
	}
	// kill -9 with a job running: interrupted after the restart.
	id = submitAsync(t, dir, "--full")
	waitRunning(t, dir, id)
	srv.kill()
	startServe(t, bin, dir)
	if j := jobJSON(t, dir, id); j.State != daemon.JobInterrupted || j.Error == "" || j.Result != nil {
		t.Errorf("job after kill -9 and restart: %+v", j)
	}
	if v, _ := viewAt(t, dir); v != version {
		t.Fatalf("view at version %d after an interrupted job, was %d", v, version)
	}
	if err := lancedbtest.StartDriver(t, dir).CheckViewAtWatermark("v"); err != nil {
		t.Fatal(err)
	}
}

// TestJobOutcomeExit: a job that lost a conflict exits 3, any other end
// but success 1.
func TestJobOutcomeExit(t *testing.T) {
	for st, want := range map[daemon.JobState]int{daemon.JobSucceeded: 0, daemon.JobConflict: 3, daemon.JobFailed: 1,
		daemon.JobCancelled: 1, daemon.JobInterrupted: 1, daemon.JobRunning: 1} {
		if got := exitCode(jobOutcome(daemon.Job{ID: "j_1", State: st, Error: "x"})); got != want {
			t.Errorf("job %s: exit %d, want %d", st, got, want)
		}
	}
}
