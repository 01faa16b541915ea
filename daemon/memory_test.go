package daemon

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rss is this process's resident set size in bytes (/proc/self/statm).
func rss(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("no /proc/self/statm: %v", err)
	}
	f := strings.Fields(string(b))
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// sink keeps the allocation below from being optimized away.
var sink [][]byte

// TestMemoryReturnedAfterBurst: a burst of allocation the size of a big
// rebuild's columns (384 MiB in 1 MiB buffers), then dropped, leaves the
// process's RSS high while it is idle; the returner, on an injected short
// period, gives it back to the OS within seconds.
func TestMemoryReturnedAfterBurst(t *testing.T) {
	if testing.Short() || raceEnabled {
		// Under the race detector the RSS is mostly shadow memory, which is
		// never returned, and allocation is slow enough to look like work
		// for seconds: the figure this test checks is not measurable there.
		t.Skip("allocates 384 MiB; RSS is not the heap's under -race")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	m := memoryReturner{every: 100 * time.Millisecond, threshold: 64 << 20, log: quietLog}
	go func() {
		defer close(done)
		m.run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	before := rss(t)
	for range 384 {
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1 // touch every page: resident
		}
		sink = append(sink, b)
	}
	peak := rss(t)
	sink = nil // the "rebuild" is over; the view is dropped
	deadline := time.Now().Add(10 * time.Second)
	for rss(t) > before+(peak-before)/4 {
		if time.Now().After(deadline) {
			t.Fatalf("RSS %d MiB 10s after a %d MiB burst (before %d MiB): memory not returned",
				rss(t)>>20, (peak-before)>>20, before>>20)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("RSS before %d MiB, at the peak %d MiB, after %d MiB", before>>20, peak>>20, rss(t)>>20)
}
