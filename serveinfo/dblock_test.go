package serveinfo

import (
	"errors"
	"strings"
	"testing"
)

// TestDatabaseLockModes: daemons on an external server share the
// database's lock; an embedded-NATS daemon takes it alone.
func TestDatabaseLockModes(t *testing.T) {
	db := t.TempDir()
	s1, err := AcquireDBLock(db, "/state/1", false)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := AcquireDBLock(db, "/state/2", false)
	if err != nil {
		t.Fatalf("two daemons on an external server: %v", err)
	}
	if _, err := AcquireDBLock(db, "/state/3", true); !errors.Is(err, ErrDatabaseLocked) || !strings.Contains(err.Error(), "external NATS server") {
		t.Errorf("embedded beside external ones: %v", err)
	}
	_ = s1.Release()
	_ = s2.Release()
	x, err := AcquireDBLock(db, "/state/3", true)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Release()
	if _, err := AcquireDBLock(db, "/state/4", false); !errors.Is(err, ErrDatabaseLocked) || !strings.Contains(err.Error(), "state directory /state/3") {
		t.Errorf("external beside an embedded one: %v", err)
	}
}
