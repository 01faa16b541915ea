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
	if err := s.RecordRefreshes(ctx, []RefreshRecord{rec}); err != nil {
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
	if err := ro.PutBlob(ctx, "v", "k", nil); err == nil {
		t.Error("a write through a read-only store succeeded")
	}
}

// TestRecordRefreshes: a batch larger than one transaction's share is
// written whole and in order, each view numbered on its own; bad input
// writes nothing.
func TestRecordRefreshes(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "state"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var rs []RefreshRecord
	for i := range 2*batchMax + 3 {
		rs = append(rs, RefreshRecord{View: []string{"a", "b"}[i%2], SourceVersion: uint64(i)})
	}
	if err := s.RecordRefreshes(ctx, rs); err != nil {
		t.Fatal(err)
	}
	for view, want := range map[string]int{"a": batchMax + 2, "b": batchMax + 1} {
		hist, err := s.History(ctx, view, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(hist) != want {
			t.Fatalf("%s: %d records, want %d", view, len(hist), want)
		}
		for i, r := range hist {
			if r.Seq != uint64(len(hist)-i) || i > 0 && r.SourceVersion >= hist[i-1].SourceVersion {
				t.Fatalf("%s: record %d is %+v after %+v", view, i, r, hist[max(i-1, 0)])
			}
		}
	}
	bad := []RefreshRecord{{View: "c"}, {}}
	if err := s.RecordRefreshes(ctx, bad); err == nil {
		t.Fatal("a record without a view accepted")
	}
	if hist, _ := s.History(ctx, "c", 0); len(hist) != 0 {
		t.Errorf("a refused batch wrote %d records", len(hist))
	}
}
