package bench

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// pinProcess binds every thread of process pid (0: this one) to CPU cpu;
// threads it starts later inherit the binding from their creator. The
// maintenance benchmark uses it (MVD_MAINT_PIN=1) to give the daemon and
// LanceDB's writer a core each on a 2-core machine, so that the daemon's
// freshness over thousands of commits is measured apart from LanceDB's
// own CPU per commit, which grows with the source's versions (in
// production the writer is another machine).
func pinProcess(tb testing.TB, pid, cpu int) {
	tb.Helper()
	dir := "/proc/self/task"
	if pid > 0 {
		dir = "/proc/" + strconv.Itoa(pid) + "/task"
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatalf("pin: %v", err)
	}
	var set unix.CPUSet
	set.Set(cpu)
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil {
			tb.Logf("pin thread %d of %s to CPU %d: %v", tid, dir, cpu, err)
		}
	}
}
