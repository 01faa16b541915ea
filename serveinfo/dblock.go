package serveinfo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrDatabaseLocked means another serve process serves the database in a
// way this one cannot share: one of the two runs the embedded NATS
// server, whose change-set feeds no other daemon sees, so both would
// refresh every view and conflict.
var ErrDatabaseLocked = errors.New("database is locked by another mvd serve")

// dbLockFile is the database lock, DB/.mvd/serve.lock, whatever the state
// directory: the state directory's own lock cannot see a daemon given
// another --state-dir.
const dbLockFile = "serve.lock"

// AcquireDBLock takes the database's lock: exclusive for a daemon with
// the embedded NATS server (it must be the only one), shared for one on an
// external server (daemons sharing a server share the views' feeds, so
// several may serve one database). An exclusive holder writes its pid and
// state directory into the file for the refusal message.
func AcquireDBLock(db, stateDir string, exclusive bool) (*Lock, error) {
	dir := filepath.Join(db, ".mvd")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	path := filepath.Join(dir, dbLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	if err := flockRetrying(f, how); err != nil {
		_ = f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, dbLockRefusal(db, path, exclusive)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if exclusive {
		if err := f.Truncate(0); err == nil {
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"+stateDir+"\n"), 0)
		}
	}
	return &Lock{f: f}, nil
}

// dbLockRefusal says who serves db. A daemon refused an exclusive lock
// meets either an embedded-NATS daemon (named in the file) or daemons on
// an external server (the file says nothing); one refused a shared lock
// meets an embedded-NATS daemon.
func dbLockRefusal(db, path string, exclusive bool) error {
	holder := "another mvd serve on an external NATS server"
	if b, err := os.ReadFile(path); err == nil {
		lines := strings.SplitN(strings.TrimSpace(string(b)), "\n", 2)
		if pid, perr := strconv.Atoi(lines[0]); perr == nil {
			holder = fmt.Sprintf("process %d", pid)
			if len(lines) == 2 {
				holder += fmt.Sprintf(" (state directory %s)", lines[1])
			}
			holder += " with its embedded NATS server"
		}
	}
	why := "one daemon per database with the embedded NATS server, whatever its state directory"
	if !exclusive {
		why = "a daemon on an external NATS server cannot share a database with one on an embedded server"
	}
	return fmt.Errorf("%w: %s serves %s (%s; stop it first)", ErrDatabaseLocked, holder, db, why)
}
