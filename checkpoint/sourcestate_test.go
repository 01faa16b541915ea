package checkpoint

import (
	"bytes"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// TestSourceStates: a state handed over is encoded and written by the
// store's writer (FlushSourceStates waits for it), the latest handed over
// before a write wins, a state already held is not encoded again, one
// that fails or is too large removes the view's older one and is not
// tried again for that version, DeleteView
// removes it, and Close writes what is still waiting.
func TestSourceStates(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "state")
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var encoded atomic.Int32
	state := func(b string) func() ([]byte, error) {
		return func() ([]byte, error) { encoded.Add(1); return []byte(b), nil }
	}
	expect := func(view, want string) {
		t.Helper()
		got, err := s.LoadSourceState(ctx, view)
		if want == "" {
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("state of %s: %q, %v; want ErrNotFound", view, got, err)
			}
			return
		}
		if err != nil || string(got) != want {
			t.Fatalf("state of %s: %q, %v; want %q", view, got, err, want)
		}
	}
	expect("v", "")
	s.KeepSourceState("v", 1, 10, state("one"))
	s.KeepSourceState("v", 2, 20, state("two"))
	s.KeepSourceState("w", 2, 20, state("w-two"))
	s.FlushSourceStates()
	expect("v", "two")
	expect("w", "w-two")

	n := encoded.Load()
	s.KeepSourceState("v", 2, 20, state("two again"))
	s.FlushSourceStates()
	if encoded.Load() != n {
		t.Errorf("a state already held was encoded again")
	}
	expect("v", "two")

	s.KeepSourceState("v", 3, 30, func() ([]byte, error) { return nil, errors.New("deletion file gone") })
	s.KeepSourceState("w", 3, 30, func() ([]byte, error) { return make([]byte, MaxSourceStateSize+1), nil })
	s.FlushSourceStates()
	expect("v", "")
	expect("w", "")
	n = encoded.Load()
	s.KeepSourceState("v", 3, 30, state("three")) // that version failed: not tried again
	s.FlushSourceStates()
	if encoded.Load() != n {
		t.Errorf("a version whose state failed was encoded again")
	}
	expect("v", "")

	big := bytes.Repeat([]byte{7}, 2<<20) // past Badger's value threshold
	s.KeepSourceState("v", 4, 40, func() ([]byte, error) { return big, nil })
	s.KeepSourceState("w", 4, 40, state("w-four"))
	s.FlushSourceStates()
	if got, err := s.LoadSourceState(ctx, "v"); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("large state: %d bytes, %v", len(got), err)
	}
	if err := s.DeleteView(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	expect("w", "")

	s.KeepSourceState("w", 5, 50, state("w-five"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s.KeepSourceState("w", 6, 60, state("after close")) // ignored
	if s, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	expect("w", "w-five")
}
