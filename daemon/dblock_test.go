package daemon

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneDaemonPerDatabase: with the embedded NATS server a second serve
// on the same database is refused whatever its state directory, naming
// the running one and suggesting nothing that would run two daemons side
// by side; a serve on an external server is refused too (it would not
// share the embedded one's feeds).
func TestOneDaemonPerDatabase(t *testing.T) {
	db := t.TempDir()
	createTable(t, db, "src")
	a := startServe(t, "--db", db, "--admin-addr", "127.0.0.1:0")
	info := waitServing(t, filepath.Join(db, ".mvd"), a.cmd.Process.Pid)
	for _, args := range [][]string{
		{"--state-dir", filepath.Join(t.TempDir(), "other")},
		{"--state-dir", filepath.Join(t.TempDir(), "ext"), "--nats-url", "nats://127.0.0.1:1"},
	} {
		b := startServe(t, append([]string{"--db", db, "--admin-addr", "127.0.0.1:0"}, args...)...)
		code, stderr := b.wait(t)
		if code != 1 || !strings.Contains(stderr, "locked by another mvd serve") || !strings.Contains(stderr, fmt.Sprintf("process %d", info.PID)) ||
			!strings.Contains(stderr, filepath.Join(db, ".mvd")) || strings.Contains(stderr, "--state-dir") {
			t.Errorf("second serve %v: exit %d, stderr %q; want refused naming process %d and its state directory, no --state-dir advice", args, code, stderr, info.PID)
		}
	}
}

// TestDatabaseLockModes: daemons on an external server share the
// database's lock; an embedded-NATS daemon takes it alone.
func TestDatabaseLockModes(t *testing.T) {
	db := t.TempDir()
	s1, err := acquireDBLock(db, "/state/1", false)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := acquireDBLock(db, "/state/2", false)
	if err != nil {
		t.Fatalf("two daemons on an external server: %v", err)
	}
	if _, err := acquireDBLock(db, "/state/3", true); !errors.Is(err, ErrDatabaseLocked) || !strings.Contains(err.Error(), "external NATS server") {
		t.Errorf("embedded beside external ones: %v", err)
	}
	_ = s1.Release()
	_ = s2.Release()
	x, err := acquireDBLock(db, "/state/3", true)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Release()
	if _, err := acquireDBLock(db, "/state/4", false); !errors.Is(err, ErrDatabaseLocked) || !strings.Contains(err.Error(), "state directory /state/3") {
		t.Errorf("external beside an embedded one: %v", err)
	}
}
