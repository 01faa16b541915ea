package serveinfo

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain doubles as a helper process that holds a state directory's
// lock until its stdin closes or it is killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("MVD_TEST_HOLD_LOCK"); dir != "" {
		l, err := AcquireLock(dir)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		_, _ = io.Copy(io.Discard, os.Stdin)
		_ = l.Release()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestLockRefusesSecondHolder(t *testing.T) {
	dir := t.TempDir() + "/state"
	l, err := AcquireLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = AcquireLock(dir)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("process %d", os.Getpid())) {
		t.Fatalf("second lock: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := AcquireLock(dir)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	l2.Release()
}

// TestLockAcrossProcesses: another process's lock is refused with its
// pid, and a kill -9 of that process frees the lock (no stale lock).
func TestLockAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MVD_TEST_HOLD_LOCK="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "locked" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("helper said %q", line)
	}
	_, err = AcquireLock(dir)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("process %d", cmd.Process.Pid)) {
		t.Errorf("lock held by another process: %v", err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	l, err := AcquireLock(dir)
	if err != nil {
		t.Fatalf("after kill -9 of the holder: %v", err)
	}
	l.Release()
}

// TestLockDuringProbes: a daemon starting while another process asks the
// lock whether a daemon runs (Running, which takes it shared for a moment,
// as mvd subscribe does in a loop while it waits for a restart) gets the
// lock; a real holder is still refused.
func TestLockDuringProbes(t *testing.T) {
	dir := t.TempDir() + "/state"
	l, err := AcquireLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	probed := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				probed <- n
				return
			default:
			}
			if _, running, err := Running(dir); err == nil && !running {
				n++
			}
		}
	}()
	for i := range 200 {
		l, err := AcquireLock(dir)
		if err != nil {
			close(stop)
			<-probed
			t.Fatalf("lock %d while another process probes it: %v", i, err)
		}
		if err := l.Release(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	if n := <-probed; n == 0 {
		t.Fatal("no probe ran beside the locks")
	}
	held, err := AcquireLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	if _, err := AcquireLock(dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("second holder during probes: %v", err)
	}
}
