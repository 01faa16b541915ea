package checkpoint

import (
	"math/rand"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// TestSourceStatesPaced: after a write the state writer waits (at least
// SourceStateGap) before the next, and the states handed over meanwhile
// are written once, the latest of them. A view's state is as large as its
// source's manifest; written after every refresh of a source with
// thousands of fragments it cost more than the refreshes (issue 22).
func TestSourceStatesPaced(t *testing.T) {
	ctx := t.Context()
	waits := make(chan time.Duration)
	fire := make(chan time.Time)
	after := func(d time.Duration) <-chan time.Time {
		waits <- d
		return fire
	}
	s, err := Open(filepath.Join(t.TempDir(), "state"), Options{SourceStateGap: 3 * time.Second, stateAfter: after})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var encoded atomic.Int32
	state := func(b string) func() ([]byte, error) {
		return func() ([]byte, error) { encoded.Add(1); return []byte(b), nil }
	}
	s.KeepSourceState("v", 1, 10, state("one"))
	select {
	case d := <-waits:
		if d < 3*time.Second {
			t.Errorf("the writer waits %v after a write, want at least the gap (3s)", d)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the state writer did not pause after a write")
	}
	if got, err := s.LoadSourceState(ctx, "v"); err != nil || string(got) != "one" {
		t.Fatalf("state after the first write: %q, %v", got, err)
	}
	for i := uint64(2); i <= 50; i++ {
		s.KeepSourceState("v", i, int64(i)*10, state("state "+string(rune('0'+i%10))))
	}
	s.KeepSourceState("v", 51, 510, state("latest"))
	if n := encoded.Load(); n != 1 {
		t.Fatalf("%d states encoded while the writer waits, want 1 (the first)", n)
	}
	fire <- time.Now() // the gap is over: the latest state is written
	select {
	case <-waits:
	case <-time.After(30 * time.Second):
		t.Fatal("the state writer did not write the states handed over during its pause")
	}
	if got, err := s.LoadSourceState(ctx, "v"); err != nil || string(got) != "latest" {
		t.Fatalf("state after the pause: %q, %v; want the latest handed over", got, err)
	}
	if n := encoded.Load(); n != 2 {
		t.Errorf("%d states encoded, want 2 (the first and the latest)", n)
	}
	go func() {
		for range waits { // Close ends the last pause
		}
	}()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	close(waits)
}

// TestStatePause: the wait after a write is the longest of the gap, ten
// times the write's duration and the write's bytes at stateWriteRate,
// never over maxStateGap; a negative gap never waits.
func TestStatePause(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		gap, took time.Duration
		size      int
		want      time.Duration
	}{
		{time.Second, time.Millisecond, 100, time.Second},
		{time.Second, 200 * time.Millisecond, 100, 2 * time.Second},
		{time.Second, time.Millisecond, mib, 4 * time.Second},           // 1 MiB at 256 KiB/s
		{time.Second, time.Millisecond, mib / 2, 2 * time.Second},       // two views of 0.25 MiB
		{time.Second, time.Millisecond, 16 * mib, maxStateGap},          // capped
		{3 * time.Second, 500 * time.Millisecond, mib, 5 * time.Second}, // the write's duration
		{-1, time.Second, 16 * mib, 0},                                  // pacing off
		{20 * time.Second, time.Millisecond, 0, maxStateGap},            // a gap over the cap
	} {
		w := newStateWriter(c.gap, nil)
		if got := w.pause(c.took, c.size); got != c.want {
			t.Errorf("gap %v, write of %d bytes in %v: pause %v, want %v", c.gap, c.size, c.took, got, c.want)
		}
	}
}

// TestLargeStatesPacedByBytes: after a write of large states the writer
// waits as long as their bytes take at stateWriteRate, not just the gap.
func TestLargeStatesPacedByBytes(t *testing.T) {
	waits := make(chan time.Duration, 4)
	after := func(d time.Duration) <-chan time.Time {
		waits <- d
		return make(chan time.Time) // the test ends before the wait does
	}
	s, err := Open(filepath.Join(t.TempDir(), "state"), Options{stateAfter: after})
	if err != nil {
		t.Fatal(err)
	}
	// Random bytes: chunks the store does not hold yet, all of them
	// written (a state's unchanged chunks are not written again).
	big := make([]byte, 1<<20)
	rand.New(rand.NewSource(1)).Read(big)
	for _, v := range []string{"a", "b"} {
		s.KeepSourceState(v, 1, 10, func() ([]byte, error) { return big, nil })
	}
	var d time.Duration
	select {
	case d = <-waits:
	case <-time.After(30 * time.Second):
		t.Fatal("the state writer did not pause after a write")
	}
	// One or both states in the first batch: 4 s per MiB.
	if d < 4*time.Second {
		t.Errorf("the writer waits %v after writing 1-2 MiB of states, want at least 4s", d)
	}
	go func() {
		for range waits {
		}
	}()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	close(waits) // Close has stopped the writer: nothing sends any more
}
