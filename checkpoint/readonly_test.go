package checkpoint

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
)

// TestOpenReadOnly: a store the daemon closed is read while no daemon
// runs, without a write; while a daemon holds it, the reader is told so.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "state")
	if _, err := OpenReadOnly(dir, Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no store: %v", err)
	}
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := RefreshRecord{View: "v", Mode: "incremental", SourceVersion: 3}
	if err := s.RecordRefreshes(ctx, []Refresh{{Record: rec}}); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenReadOnly(dir, Options{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("held by a daemon: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	hist, err := ro.History(ctx, "v", 10)
	if err != nil || len(hist) != 1 || hist[0].SourceVersion != 3 {
		t.Fatalf("history %+v, %v", hist, err)
	}
	if err := ro.PutProgress(ctx, Progress{View: "v"}); err == nil {
		t.Error("a write through a read-only store succeeded")
	}
}
