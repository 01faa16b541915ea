package bench

import (
	"os"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// threads lists the threads of process pid (0: this one), as its
// /proc task directory, which it also returns; what names the caller in
// the failure.
func threads(tb testing.TB, pid int, what string) (tids []int, dir string) {
	tb.Helper()
	dir = "/proc/self/task"
	if pid > 0 {
		dir = "/proc/" + strconv.Itoa(pid) + "/task"
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, dir
}

// pinProcess binds every thread of process pid (0: this one) to CPU cpu;
// threads it starts later inherit the binding from their creator. The
// maintenance benchmark uses it (MVD_MAINT_PIN=1) to give the daemon and
// LanceDB's writer a core each on a 2-core machine, so that the daemon's
// freshness over thousands of commits is measured apart from LanceDB's
// own CPU per commit, which grows with the source's versions (in
// production the writer is another machine).
func pinProcess(tb testing.TB, pid, cpu int) {
	tb.Helper()
	tids, dir := threads(tb, pid, "pin")
	var set unix.CPUSet
	set.Set(cpu)
	for _, tid := range tids {
		if err := unix.SchedSetaffinity(tid, &set); err != nil {
			tb.Logf("pin thread %d of %s to CPU %d: %v", tid, dir, cpu, err)
		}
	}
}

// reniceProcess sets the nice value of every thread of process pid to n;
// threads it starts later inherit it from their creator. The maintenance
// benchmark lowers LanceDB's writer (MVD_MAINT_WRITER_NICE) so that its
// own CPU per commit, which grows with the source's versions, stands for
// a writer on another machine instead of taking the daemon's cores when
// a commit's refresh needs them.
func reniceProcess(tb testing.TB, pid, n int) {
	tb.Helper()
	tids, _ := threads(tb, pid, "renice")
	for _, tid := range tids {
		if err := unix.Setpriority(unix.PRIO_PROCESS, tid, n); err != nil {
			tb.Logf("renice thread %d of process %d to %d: %v", tid, pid, n, err)
		}
	}
}

// idleProcess puts every thread of process pid under SCHED_IDLE: it runs
// only on a core nothing else wants, and gives it up at once when another
// thread wakes (MVD_MAINT_WRITER_IDLE). Nice 19 still takes a share, and
// the scheduler lets a running nice-19 thread finish a slice first; under
// SCHED_IDLE LanceDB's writer, whose CPU per commit grows tenfold over the
// run, stands closer for a writer on another machine.
func idleProcess(tb testing.TB, pid int) {
	tb.Helper()
	tids, _ := threads(tb, pid, "sched_idle")
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}
	for _, tid := range tids {
		if err := unix.SchedSetAttr(tid, &attr, 0); err != nil {
			tb.Fatalf("SCHED_IDLE for thread %d of process %d: %v", tid, pid, err)
		}
	}
}

// monoOffset is CLOCK_MONOTONIC less the wall clock now: added to a
// time.Time it gives the instant on the clock `perf trace -T` and other
// kernel tracers print, to line a slow commit up with their events.
func monoOffset() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano()) - time.Duration(time.Now().UnixNano())
}
