package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/serveinfo"
)

// TestServeCLI checks serve's help, usage errors and --check-config.
func TestServeCLI(t *testing.T) {
	db := t.TempDir()
	code, out, errOut := runCLI("serve", "--help")
	if code != 0 || errOut != "" || !strings.Contains(out, "--db DIR") || !strings.Contains(out, "--check-config") || !strings.Contains(out, "MVD_") {
		t.Errorf("serve --help: exit %d, stderr %q:\n%s", code, errOut, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], "-") && len(f) < 3 {
			t.Errorf("flag without a description: %q", line)
		}
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve", "extra"}, 2, "serve takes no arguments"},
		{[]string{"serve", "--bogus"}, 2, "unknown flag: --bogus"},
		{[]string{"serve", "--poll-interval", "soon"}, 2, "invalid value \"soon\" for --poll-interval"},
		{[]string{"serve", "--check-config"}, 1, "no database directory"},
		{[]string{"serve", "--db", db, "--log-format", "xml", "--check-config"}, 1, "log-format \"xml\""},
		{[]string{"serve", "--db", db, "--poll-interval", "1ns", "--check-config"}, 2, "poll-interval 1ns: must be at least 10ms"},
	} {
		code, _, errOut := runCLI(tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 || strings.Contains(errOut, ":;") {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q on one line", tc.args, code, errOut, tc.code, tc.want)
		}
	}
	code, out, errOut = runCLI("serve", "--db", db, "--admin-addr", "127.0.0.1:0", "--check-config")
	var cfg daemon.Config
	if code != 0 || errOut != "" || json.Unmarshal([]byte(out), &cfg) != nil || cfg.DB != db || cfg.AdminAddr != "127.0.0.1:0" {
		t.Errorf("--check-config: exit %d, stderr %q, out %s", code, errOut, out)
	}
}

// TestServeBinary runs the real mvd binary: it serves, answers /healthz,
// refuses a second instance and exits 0 on SIGTERM, removing serve.json.
func TestServeBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := mvdBinary(t)
	db := t.TempDir()
	state := filepath.Join(db, ".mvd")
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "serve", "--db", db, "--admin-addr", "127.0.0.1:0")
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
		<-done
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if info, err := serveinfo.Read(state); err == nil && info.PID == cmd.Process.Pid {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no serve.json; stderr:\n%s", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	info, err := serveinfo.Read(state)
	if err != nil || !strings.HasPrefix(info.NATSURL, "nats://127.0.0.1:") || len(info.Token) < 32 {
		t.Errorf("serve.json: %+v, %v; want the embedded NATS server's URL and token", info, err)
	}
	second := exec.Command(bin, "serve", "--db", db, "--admin-addr", "127.0.0.1:0")
	out, err := second.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "locked by another mvd serve") {
		t.Errorf("second serve: %v\n%s", err, out)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		done <- err
		if err != nil {
			t.Errorf("after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not exit after SIGTERM:\n%s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(state, serveinfo.File)); !os.IsNotExist(err) {
		t.Errorf("serve.json after exit: %v", err)
	}
	// A clean stop warns of nothing and says so in its last line.
	logs := strings.TrimSpace(stderr.String())
	lines := strings.Split(logs, "\n")
	if strings.Contains(logs, "level=WARN") || !strings.Contains(lines[len(lines)-1], "level=INFO msg=stopped") ||
		strings.Count(logs, "msg=stopped") != 1 {
		t.Errorf("log of a clean stop: want no warning and one last INFO stopped line:\n%s", logs)
	}
}
