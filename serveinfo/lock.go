package serveinfo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// ErrLocked means another process holds the state directory's lock: a
// second `mvd serve` on the same database and state directory.
var ErrLocked = errors.New("state directory is locked by another mvd serve")

// LockFile is the lock's name inside the state directory.
const LockFile = "lock"

// Lock is an exclusive advisory lock (flock) on DIR/.mvd/lock, held for
// the life of the serve process. The kernel releases it when the process
// dies, however it dies, so a stale lock never blocks a restart.
type Lock struct {
	f *os.File
}

// AcquireLock creates the state directory if needed and takes its lock
// without waiting. If another process holds it, the error wraps ErrLocked
// and names that process's pid.
func AcquireLock(stateDir string) (*Lock, error) {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("create state directory %s: %w", stateDir, err)
	}
	path := filepath.Join(stateDir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := flockRetrying(f, unix.LOCK_EX); err != nil {
		_ = f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			holder := "another process"
			if b, rerr := os.ReadFile(path); rerr == nil {
				if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
					holder = fmt.Sprintf("process %d", pid)
				}
			}
			return nil, fmt.Errorf("%w: %s holds %s (stop it first)", ErrLocked, holder, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// The pid is for the message above only; the flock is the lock.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// probeGrace is how long AcquireLock retries a refused lock. Running
// takes the lock shared for a few microseconds to ask whether a serve
// holds it (mvd subscribe asks while it waits for a restarted daemon); a
// serve holds it for its whole life. Without the retry a daemon starting
// during a probe would refuse to start.
const probeGrace = 200 * time.Millisecond

// flockRetrying takes f's lock (how: LOCK_EX or LOCK_SH) without waiting
// on a holder, retrying for probeGrace while the refusal may be a probe's.
func flockRetrying(f *os.File, how int) error {
	deadline := time.Now().Add(probeGrace)
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(time.Millisecond)
	}
}

// Release gives the lock up. The lock file stays: removing it would let
// a third process lock a new file while a second still waits on the old.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := l.f.Close() // closing the descriptor releases the flock
	l.f = nil
	return err
}

// Running reports whether a serve process holds stateDir's lock, and if
// so what its serve.json says. It asks the lock, not the pid in a file:
// a serve.json left by a killed daemon is reported as not running. A
// daemon that holds the lock but has not written serve.json yet (it is
// starting) is running with a zero Info.
func Running(stateDir string) (Info, bool, error) {
	path := filepath.Join(stateDir, LockFile)
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Info{}, false, nil
		}
		return Info{}, false, err
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err == nil {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		return Info{}, false, nil
	} else if !errors.Is(err, unix.EWOULDBLOCK) {
		return Info{}, false, fmt.Errorf("lock %s: %w", path, err)
	}
	info, err := Read(stateDir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Info{}, true, nil
		}
		return Info{}, true, err
	}
	return info, true, nil
}
