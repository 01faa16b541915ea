package daemon

import (
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
