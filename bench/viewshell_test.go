package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mvd-project/mvd/matview"
)

// mvdShell is one warm `mvd sql --db DIR --json` process: statements go in
// on stdin, one JSON line per statement comes back on stdout. It is how other
// programs drive many refreshes from one process, so it is measured as such.
type mvdShell struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// startShell starts the shell on database dir; it is stopped (stdin closed,
// process waited for) at the end of the test.
func startShell(tb testing.TB, bin, dir string) *mvdShell {
	tb.Helper()
	cmd := exec.Command(bin, "sql", "--db", dir, "--json")
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	s := &mvdShell{cmd: cmd, in: in, out: bufio.NewReader(out)}
	tb.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return s
}

// exec sends one statement and returns its answer line and the wall time
// from writing the statement to reading the whole answer.
func (s *mvdShell) exec(stmt string) (string, time.Duration, error) {
	t0 := time.Now()
	if _, err := io.WriteString(s.in, stmt+";\n"); err != nil {
		return "", 0, fmt.Errorf("shell: write %q: %w", stmt, err)
	}
	line, err := s.out.ReadString('\n')
	el := time.Since(t0)
	if err != nil {
		return "", el, fmt.Errorf("shell: answer to %q: %w", stmt, err)
	}
	var e struct {
		Error string `json:"error"`
		Code  int    `json:"code"`
	}
	if json.Unmarshal([]byte(line), &e) == nil && e.Error != "" {
		return line, el, fmt.Errorf("shell: %s: %s (code %d)", stmt, e.Error, e.Code)
	}
	return line, el, nil
}

// refresh runs one REFRESH MATERIALIZED VIEW through the shell. It resets
// the shell's RSS high-water mark first (as the LanceDB driver does for
// node) and returns the wall time, the peak RSS during the refresh (KB; 0
// when /proc is not there) and the result.
func (s *mvdShell) refresh(view string, full bool) (time.Duration, uint64, matview.Result, error) {
	pid := s.cmd.Process.Pid
	resetPeakRSS(pid)
	stmt := "REFRESH MATERIALIZED VIEW " + view
	if full {
		stmt += " WITH (full = true)"
	}
	line, el, err := s.exec(stmt)
	var r matview.Result
	if err != nil {
		return el, 0, r, err
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil || r.Mode == "" {
		return el, 0, r, fmt.Errorf("shell: %s: unexpected answer %q", stmt, line)
	}
	return el, procStatusKB(pid, "VmHWM:"), r, nil
}

// waitProcQuiet waits, for at most max, until no thread of process pid
// is running or in uninterruptible sleep (state R or D in
// /proc/PID/task/*/stat) at two looks in a row, 100 µs apart: what the
// process's last request left to the background (a sync, a build, a
// collection) has ended, and does not run inside the next engine's
// refresh. It reports whether the process got quiet; without /proc it
// returns false at once.
func waitProcQuiet(pid int, max time.Duration) bool {
	deadline := time.Now().Add(max)
	quiet := 0
	for time.Now().Before(deadline) {
		busy, ok := procBusy(pid)
		if !ok {
			return false
		}
		if busy {
			quiet = 0
		} else if quiet++; quiet == 2 {
			return true
		}
		time.Sleep(100 * time.Microsecond)
	}
	return false
}

// procBusy reports whether a thread of process pid is running or in
// uninterruptible sleep; ok is false when /proc cannot tell.
func procBusy(pid int) (busy, ok bool) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tids, err := os.ReadDir(dir)
	if err != nil {
		return false, false
	}
	for _, tid := range tids {
		b, err := os.ReadFile(dir + "/" + tid.Name() + "/stat")
		if err != nil {
			continue // the thread ended
		}
		// pid (comm) state ...: comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 || i+2 >= len(b) {
			continue
		}
		if s := b[i+2]; s == 'R' || s == 'D' {
			return true, true
		}
	}
	return false, true
}

// resetPeakRSS resets a process's VmHWM to its current RSS (Linux
// clear_refs 5); a no-op elsewhere.
func resetPeakRSS(pid int) {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0o644)
}

// procStatusKB reads one KB field (VmHWM:, VmRSS:) of /proc/PID/status;
// 0 when unknown.
func procStatusKB(pid int, field string) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == field {
			n, _ := strconv.ParseUint(f[1], 10, 64)
			return n
		}
	}
	return 0
}
