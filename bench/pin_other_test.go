//go:build !linux

package bench

import (
	"testing"
	"time"
)

// pinProcess is Linux only (sched_setaffinity).
func pinProcess(tb testing.TB, pid, cpu int) {
	tb.Helper()
	tb.Fatal("MVD_MAINT_PIN needs Linux")
}

// reniceProcess is Linux only (a nice value per thread).
func reniceProcess(tb testing.TB, pid, n int) {
	tb.Helper()
	tb.Fatal("MVD_MAINT_WRITER_NICE needs Linux")
}

// idleProcess is Linux only (SCHED_IDLE).
func idleProcess(tb testing.TB, pid int) {
	tb.Helper()
	tb.Fatal("MVD_MAINT_WRITER_IDLE needs Linux")
}

// monoOffset is 0 outside Linux: slow commits are listed without the
// kernel tracers' clock.
func monoOffset() time.Duration { return 0 }
