package daemon

import (
	"context"
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// memoryReturner gives the heap a large refresh or rebuild left behind
// back to the operating system once the daemon goes quiet. Go collects
// only as the program allocates: a daemon idle after a rebuild that held
// gigabytes keeps them (as garbage, then as free spans it releases
// slowly) for minutes. When a check finds that collections ran or the
// heap grew since the last one (work happened) and then neither for a
// whole period (quiet now),
// with at least threshold bytes of heap held, it forces one collection
// and release (debug.FreeOSMemory): once per burst of work, never while
// the daemon allocates.
type memoryReturner struct {
	every     time.Duration
	threshold uint64
	log       *slog.Logger
}

// defaultMemoryReturner checks every 5s and acts above 64 MiB held.
func defaultMemoryReturner(log *slog.Logger) memoryReturner {
	return memoryReturner{every: 5 * time.Second, threshold: 64 << 20, log: log}
}

// run checks until ctx ends.
func (m memoryReturner) run(ctx context.Context) {
	samples := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
	read := func() (cycles, held uint64) {
		metrics.Read(samples)
		for i, s := range samples {
			if s.Value.Kind() != metrics.KindUint64 {
				continue
			}
			if i == 0 {
				cycles = s.Value.Uint64()
			} else {
				held += s.Value.Uint64()
			}
		}
		return cycles, held
	}
	last, lastHeld := read()
	busy := false
	// A collection that found the heap still live (the work was not over)
	// is tried again after 1, 2, 4 … 64 quiet periods: garbage made later
	// without allocating (a dropped view) gives no other sign.
	wait, waited := 0, 0
	t := time.NewTicker(m.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cycles, held := read()
		switch {
		case cycles != last || held > lastHeld+m.threshold/4: // collecting or growing: working
			busy, wait, waited = true, 0, 0
		case (busy || wait > 0) && held >= m.threshold:
			if waited++; waited < wait {
				break
			}
			debug.FreeOSMemory()
			before := held
			cycles, held = read()
			busy, waited = false, 0
			next := 0
			if held >= m.threshold && before-held < m.threshold/4 {
				next = max(1, min(2*wait, 64))
			}
			wait = next
			m.log.Debug("returned memory to the OS after a burst of work", "heap_held_before", before, "heap_held_after", held)
		default:
			busy = false
		}
		last, lastHeld = cycles, held
	}
}
