package bench

import (
	"syscall"
	"time"
)

// bestOf keeps the fastest of several timed runs, in wall and CPU time
// separately: on a shared machine the least disturbed run is the best
// estimate of each, and it matches how bench_scan.mjs reports LanceDB.
type bestOf struct {
	wall, cpu time.Duration
}

// timedRun is one run in progress.
type timedRun struct {
	b     *bestOf
	wall0 time.Time
	cpu0  time.Duration
}

func (b *bestOf) start() timedRun {
	return timedRun{b: b, wall0: time.Now(), cpu0: cpuTime()}
}

// stop records the run.
func (r timedRun) stop() {
	wall, cpu := time.Since(r.wall0), cpuTime()-r.cpu0
	if r.b.wall == 0 || wall < r.b.wall {
		r.b.wall = wall
	}
	if r.b.cpu == 0 || cpu < r.b.cpu {
		r.b.cpu = cpu
	}
}

// cpuTime returns the CPU time (user + system, all threads) this process
// has used. On a machine shared with other work it is a steadier measure
// than wall time, and bench_scan.mjs reports LanceDB's the same way.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
