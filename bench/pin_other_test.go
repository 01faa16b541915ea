//go:build !linux

package bench

import "testing"

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
