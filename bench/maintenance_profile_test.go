package bench

import (
	"os"
	"path/filepath"
	"runtime/pprof"
	"testing"
)

// maintProfile takes CPU profiles of the first and of the last k commits
// of a maintenance run (MVD_MAINT_CPUPROFILE=DIR writes first.pprof and
// last.pprof there): what a commit costs the daemon once the source holds
// thousands of fragments and versions, against what it cost at first. It
// also writes the allocation profile at the start and the end of each
// window (allocs-{first,last}-{start,end}.pprof: compare with
// go tool pprof -sample_index=alloc_space -diff_base START END).
type maintProfile struct {
	dir      string
	k, total int
	n        int // commits begun
	f        *os.File
}

// newMaintProfile returns the profiler of a run of total commits, nil
// unless MVD_MAINT_CPUPROFILE is set.
func newMaintProfile(tb testing.TB, total, k int) *maintProfile {
	dir := os.Getenv("MVD_MAINT_CPUPROFILE")
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	p := &maintProfile{dir: dir, k: k, total: total}
	tb.Cleanup(p.stop)
	return p
}

// before is called before each commit.
func (p *maintProfile) before(tb testing.TB) {
	if p == nil {
		return
	}
	switch p.n {
	case 0:
		p.allocs(tb, "allocs-first-start.pprof")
		p.start(tb, "first.pprof")
	case p.k:
		p.stop()
		p.allocs(tb, "allocs-first-end.pprof")
	}
	if p.n == p.total-p.k && p.n >= p.k {
		p.allocs(tb, "allocs-last-start.pprof")
		p.start(tb, "last.pprof")
	}
	p.n++
}

func (p *maintProfile) start(tb testing.TB, name string) {
	f, err := os.Create(filepath.Join(p.dir, name))
	if err != nil {
		tb.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		tb.Fatal(err)
	}
	p.f = f
}

// allocs writes the allocation profile so far to name.
func (p *maintProfile) allocs(tb testing.TB, name string) {
	f, err := os.Create(filepath.Join(p.dir, name))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		tb.Fatal(err)
	}
}

// stop ends the profile being taken, if any, and after the last window
// writes the allocations so far.
func (p *maintProfile) stop() {
	if p == nil || p.f == nil {
		return
	}
	if p.n > p.k {
		defer func() {
			if f, err := os.Create(filepath.Join(p.dir, "allocs-last-end.pprof")); err == nil {
				pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	pprof.StopCPUProfile()
	p.f.Close()
	p.f = nil
}
