package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/mvd-project/mvd/serveinfo"
)

// serveHelper runs `mvd serve` (daemon.Command) in this test binary when
// MVD_TEST_SERVE holds its arguments, so the tests drive real processes.
func serveHelper() {
	args := strings.Fields(os.Getenv("MVD_TEST_SERVE"))
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	BindCommandFlags(fs)
	if err := fs.Parse(args); err != nil {
		fmt.Fprintln(os.Stderr, "mvd:", err)
		os.Exit(2)
	}
	if err := Command(fs, os.Environ(), os.Stdout, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "mvd:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

type serveProc struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan error
}

func startServe(t *testing.T, args ...string) *serveProc {
	t.Helper()
	p := &serveProc{cmd: exec.Command(os.Args[0], "-test.run=^$"), done: make(chan error, 1)}
	p.cmd.Env = append(os.Environ(), "MVD_TEST_SERVE="+strings.Join(args, " "))
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
		p.done <- nil
	})
	return p
}

func (p *serveProc) wait(t *testing.T) (int, string) {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, p.stderr.String()
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not exit; stderr:\n%s", p.stderr.String())
	}
	return 0, ""
}

// waitServing polls serve.json until the process with pid serves.
func waitServing(t *testing.T, state string, pid int) serveinfo.Info {
	t.Helper()
	var info serveinfo.Info
	waitUntil(t, "serve.json", func() bool {
		var err error
		info, err = serveinfo.Read(state)
		return err == nil && info.PID == pid
	})
	return info
}

// TestServeProcess drives real serve processes: serving and ready, a
// second one refused with a clear message, SIGTERM drains and exits 0
// removing serve.json, kill -9 leaves no stale lock.
func TestServeProcess(t *testing.T) {
	db := t.TempDir()
	createTable(t, db, "src")
	state := filepath.Join(db, ".mvd")
	a := startServe(t, "--db", db, "--admin-addr", "127.0.0.1:0", "--log-format", "json")
	info := waitServing(t, state, a.cmd.Process.Pid)
	if code, _ := get(t, "http://"+info.AdminAddr+"/healthz"); code != 200 {
		t.Errorf("/healthz: %d", code)
	}
	waitUntil(t, "ready", func() bool { code, _ := get(t, "http://"+info.AdminAddr+"/readyz"); return code == 200 })
	if got, running, err := serveinfo.Running(state); err != nil || !running || got.PID != info.PID {
		t.Errorf("Running: %+v %v %v", got, running, err)
	}

	b := startServe(t, "--db", db, "--admin-addr", "127.0.0.1:0")
	code, stderr := b.wait(t)
	if code != 1 || !strings.Contains(stderr, "locked by another mvd serve") || !strings.Contains(stderr, fmt.Sprintf("process %d", info.PID)) {
		t.Errorf("second serve: exit %d, stderr %q", code, stderr)
	}

	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, stderr := a.wait(t); code != 0 || !strings.Contains(stderr, `"msg":"signal received: draining"`) {
		t.Errorf("after SIGTERM: exit %d, stderr:\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(state, serveinfo.File)); !os.IsNotExist(err) {
		t.Errorf("serve.json after SIGTERM: %v", err)
	}

	c := startServe(t, "--db", db, "--admin-addr", "127.0.0.1:0")
	waitServing(t, state, c.cmd.Process.Pid)
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	c.wait(t)
	if _, running, err := serveinfo.Running(state); err != nil || running {
		t.Errorf("after kill -9, Running says %v (%v): the stale serve.json must not count", running, err)
	}
	d := startServe(t, "--db", db, "--admin-addr", "127.0.0.1:0")
	waitServing(t, state, d.cmd.Process.Pid)
	if err := d.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code, stderr := d.wait(t); code != 0 {
		t.Errorf("after SIGINT: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestSignalContexts: the first SIGTERM cancels drain only, the second
// hard as well.
func TestSignalContexts(t *testing.T) {
	drain, hard, stop := signalContexts(context.Background(), quietLog)
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-drain.Done()
	if hard.Err() != nil {
		t.Fatal("first signal cancelled the hard context")
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-hard.Done()
}
