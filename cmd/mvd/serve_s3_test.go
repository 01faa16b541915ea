package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/serveinfo"
	"github.com/mvd-project/mvd/vfs/s3fs/s3fstest"
)

// TestServeS3 runs the real `mvd serve --db s3://…` and `mvd subscribe
// --db s3://… --state-dir` processes on a gofakes3 endpoint while LanceDB
// appends, updates and deletes in the source there: each commit's
// refresh of a view made by `mvd view create --db s3://` is notified, the
// view then holds LanceDB's evaluation of its definition, and LanceDB's
// own refresh of it finds nothing to do.
func TestServeS3(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	lancedbtest.Require(t)
	bin := mvdBinary(t)
	srv := s3fstest.Start(t, "bkt")
	// LanceDB reads the environment; mvd gets the same settings as flags.
	t.Setenv("AWS_ENDPOINT", srv.Endpoint)
	t.Setenv("AWS_ALLOW_HTTP", "true")
	t.Setenv("AWS_ACCESS_KEY_ID", s3fstest.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3fstest.SecretAccessKey)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // nothing under the real home
	var so []string
	for k, v := range srv.StorageOptions() {
		so = append(so, "--storage-option", k+"="+v)
	}
	const db = "s3://bkt/shop"
	d := lancedbtest.StartDriver(t, t.TempDir())
	if err := d.Call("connect", map[string]any{"dir": db}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 30, 0)); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(append([]string{"view", "create", "--db", db, "mv", "--source", "src", "--select", "id, amount", "--where", "id % 3 = 0"}, so...)...); code != 0 {
		t.Fatalf("view create: %s", stderr)
	}

	state := filepath.Join(t.TempDir(), "state")
	serveLog := &syncBuffer{}
	serve := exec.Command(bin, append([]string{"serve", "--db", db, "--state-dir", state, "--admin-addr", "127.0.0.1:0", "--create-grace", "0"}, so...)...)
	serve.Env = withoutAWS(os.Environ()) // the flags alone reach the store
	serve.Stderr = serveLog
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- serve.Wait() }()
	defer func() {
		if serve.ProcessState == nil {
			_ = serve.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("mvd serve's stderr:\n%s", serveLog.String())
		}
	}()
	waitUntilT(t, "serve.json", 60*time.Second, func() bool {
		info, err := serveinfo.Read(state)
		return err == nil && info.PID == serve.Process.Pid
	})

	// Without --state-dir the daemon given its own is not found, and the
	// error says to give it.
	code, _, errOut := runCLI(append([]string{"subscribe", "--db", db, "--json"}, so...)...)
	if code != 1 || !strings.Contains(errOut, "--state-dir") {
		t.Fatalf("subscribe without --state-dir: exit %d, %q; want 1 and a hint to give --state-dir", code, errOut)
	}
	sub := exec.Command(bin, append([]string{"subscribe", "--db", db, "--state-dir", state, "--json"}, so...)...)
	out, err := sub.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	subErr := &syncBuffer{}
	sub.Stderr = subErr
	if err := sub.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = sub.Process.Signal(syscall.SIGINT)
		_ = sub.Wait()
		if t.Failed() {
			t.Logf("mvd subscribe's stderr:\n%s", subErr.String())
		}
	})
	lines := readLines(out)
	if first := lines.next(t, "first line"); first != `{"subscribed":["mv"],"all_views":true}` {
		t.Fatalf("first line: %s", first)
	}
	seen := map[string]bool{}
	var last uint64
	for _, step := range []func() (uint64, error){
		func() (uint64, error) { return d.Add("src", lancedbtest.SourceRows(30, 45, 0)) },
		func() (uint64, error) {
			r, err := d.Update("src", "id < 12", map[string]string{"amount": "amount + 1000"})
			return r.Version, err
		},
		func() (uint64, error) { return d.Delete("src", "id >= 40") },
	} {
		v, err := step()
		if err != nil {
			t.Fatal(err)
		}
		lines.notification(t, seen, "mv", v)
		last = v
	}
	if err := d.CheckView("mv", last); err != nil {
		t.Fatalf("mv after mvd serve's refreshes: %v", err)
	}
	if r, err := d.Refresh("mv", lancedbtest.RefreshOptions{}); err != nil || r.Mode != "no_op" {
		t.Fatalf("LanceDB's refresh of mv: %+v, %v; want no_op", r, err)
	}
	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("serve after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not exit after SIGTERM")
	}
	if _, err := os.Stat(filepath.Join(state, serveinfo.File)); !os.IsNotExist(err) {
		t.Errorf("serve.json after exit: %v", err)
	}
}

// withoutAWS is environ without the AWS_* settings.
func withoutAWS(environ []string) []string {
	var out []string
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "AWS_") {
			out = append(out, kv)
		}
	}
	return out
}

// waitUntilT polls cond until it holds, failing after timeout.
func waitUntilT(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
