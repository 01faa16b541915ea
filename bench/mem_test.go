package bench

import (
	"bufio"
	"bytes"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// peakAllocator wraps an Arrow allocator and records the most bytes it
// held at once: what the scan's batches and decoded pages cost, without
// the Go runtime's own overhead.
type peakAllocator struct {
	memory.Allocator
	cur, peak atomic.Int64
}

func newPeakAllocator() *peakAllocator {
	return &peakAllocator{Allocator: memory.NewGoAllocator()}
}

func (a *peakAllocator) grow(n int) {
	c := a.cur.Add(int64(n))
	for p := a.peak.Load(); c > p && !a.peak.CompareAndSwap(p, c); p = a.peak.Load() {
	}
}

func (a *peakAllocator) Allocate(size int) []byte {
	a.grow(size)
	return a.Allocator.Allocate(size)
}

func (a *peakAllocator) Reallocate(size int, b []byte) []byte {
	a.grow(size - len(b))
	return a.Allocator.Reallocate(size, b)
}

func (a *peakAllocator) Free(b []byte) {
	a.grow(-len(b))
	a.Allocator.Free(b)
}

// Current returns the bytes allocated and not yet freed.
func (a *peakAllocator) Current() int64 { return a.cur.Load() }

// Peak returns the high-water mark.
func (a *peakAllocator) Peak() int64 { return a.peak.Load() }

// heapSampler polls the live heap (runtime/metrics, which does not stop
// the world as ReadMemStats does) and keeps its maximum.
type heapSampler struct {
	stop chan struct{}
	done sync.WaitGroup
	peak atomic.Uint64
}

const heapObjects = "/memory/classes/heap/objects:bytes"

func startHeapSampler(every time.Duration) *heapSampler {
	h := &heapSampler{stop: make(chan struct{})}
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		s := []metrics.Sample{{Name: heapObjects}}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > h.peak.Load() {
				h.peak.Store(v)
			}
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

// Stop ends the sampling and returns the peak heap in bytes.
func (h *heapSampler) Stop() uint64 {
	close(h.stop)
	h.done.Wait()
	return h.peak.Load()
}

// rssMark returns the resident set size after returning freed memory to the
// OS and resetting the kernel's high-water mark (VmHWM), so that a later
// peakRSSSince measures only what follows. ok is false where /proc does not
// support it.
func rssMark() (rss int64, ok bool) {
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return 0, false
	}
	rss, _, ok = procStatus()
	return rss, ok
}

// peakRSSSince returns how far the peak resident set size rose above base.
func peakRSSSince(base int64) int64 {
	_, hwm, ok := procStatus()
	if !ok {
		return 0
	}
	return hwm - base
}

// procStatus reads VmRSS and VmHWM (bytes) from /proc/self/status.
func procStatus() (rss, hwm int64, ok bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(string(f[1]), 10, 64)
		if err != nil {
			continue
		}
		switch string(f[0]) {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			hwm = kb << 10
		}
	}
	return rss, hwm, rss > 0 && hwm > 0
}
