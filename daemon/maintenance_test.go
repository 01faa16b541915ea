package daemon

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mvd-project/mvd/matview"
)

// gatedMaintainer is a fakeRefresher whose maintenance steps wait until
// released, counting the steps and the most running at once.
type gatedMaintainer struct {
	*fakeRefresher
	release              chan struct{}
	once                 sync.Once
	steps, running, most atomic.Int32
}

func (g *gatedMaintainer) Maintain(ctx context.Context) (Maintenance, error) {
	n := g.running.Add(1)
	defer g.running.Add(-1)
	for m := g.most.Load(); n > m && !g.most.CompareAndSwap(m, n); m = g.most.Load() {
	}
	g.steps.Add(1)
	select {
	case <-g.release:
	case <-ctx.Done():
	}
	return Maintenance{}, nil
}

func (g *gatedMaintainer) open() { g.once.Do(func() { close(g.release) }) }

// TestRefreshesBesideMaintenance: a view's refreshes do not wait for its
// maintenance step in flight (a cleanup's deletions and syncs, a
// compaction's rewrite: they stalled the refresh behind them by tens of
// ms), steps never overlap, and a step is run again after the refreshes
// made meanwhile.
func TestRefreshesBesideMaintenance(t *testing.T) {
	g := &gatedMaintainer{fakeRefresher: &fakeRefresher{}, release: make(chan struct{})}
	o, _, _ := runOwner(t, ownerConfig{Refresher: g, Policy: matview.Policy{Mode: matview.OnCommit}})
	t.Cleanup(g.open) // before runOwner's cleanup waits for Run
	o.Notify(wakeUp{SourceVersion: 1})
	waitUntil(t, "a maintenance step in flight", func() bool { return g.running.Load() == 1 })
	for v := uint64(2); v <= 4; v++ {
		o.Notify(wakeUp{SourceVersion: v})
		waitUntil(t, fmt.Sprintf("the refresh to %d beside the step", v), func() bool { return g.reflected() == v })
	}
	if n := g.steps.Load(); n != 1 {
		t.Fatalf("%d maintenance steps started while the first ran, want 1", n)
	}
	g.open()
	waitUntil(t, "the step asked for by the refreshes made meanwhile", func() bool { return g.steps.Load() == 2 })
	if m := g.most.Load(); m != 1 {
		t.Fatalf("%d maintenance steps ran at once, want 1", m)
	}
}

// compactingMaintainer is a fakeRefresher whose first maintenance step
// commits a compaction: during the step the watcher reports the view
// versions reports (the step's own commit among them, or not yet), and
// the step returns commit as its version.
type compactingMaintainer struct {
	*fakeRefresher
	o       *viewOwner // set before the first wake-up
	reports []uint64
	commit  uint64
	steps   atomic.Int32
}

func (m *compactingMaintainer) Maintain(ctx context.Context) (Maintenance, error) {
	if m.steps.Add(1) > 1 {
		return Maintenance{}, nil
	}
	for _, v := range m.reports {
		m.o.ViewCommitted(v)
	}
	return Maintenance{Compaction: &CompactionStats{Version: m.commit}}, nil
}

// TestOwnCompactionWakesNoRefresh: the owner's own compaction commit,
// reported by the watcher before or after the step returns, is not a
// foreign commit (it woke a no_op refresh per compaction step, which a
// source commit's change set then waited behind); a compaction rebased
// over someone else's commit, or someone else's commit after it, still
// is. The owner's refresh commits view version 1 (fake: version = call
// number).
func TestOwnCompactionWakesNoRefresh(t *testing.T) {
	for _, tc := range []struct {
		name        string
		reports     []uint64 // reported during the step
		commit      uint64   // the step's own commit
		late        uint64   // reported after the step, 0: none
		wantForeign bool
	}{
		{"reported during the step", []uint64{2}, 2, 0, false},
		{"reported after the step", nil, 2, 2, false},
		{"rebased over another commit", []uint64{2, 3}, 3, 0, true},
		{"another commit after it", []uint64{2, 3}, 2, 0, true},
		{"another commit after it, reported late", []uint64{2}, 2, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeRefresher{gate: make(chan struct{})}
			m := &compactingMaintainer{fakeRefresher: f, reports: tc.reports, commit: tc.commit}
			o, _, _ := runOwner(t, ownerConfig{Refresher: m})
			t.Cleanup(func() { close(f.gate) }) // before runOwner's cleanup waits for Run, even after a failure
			m.o = o
			o.Notify(wakeUp{SourceVersion: 5})
			f.gate <- struct{}{}
			waitUntil(t, "the step recorded, or a refresh woken", func() bool {
				calls, _ := f.snapshot()
				return m.steps.Load() >= 1 && (o.Committed() == tc.commit || len(calls) == 2)
			})
			if tc.late != 0 {
				o.ViewCommitted(tc.late)
			}
			if got := o.foreignWoken.Load() != 0; got != tc.wantForeign {
				t.Fatalf("foreign wake-up %v, want %v (owner's commit %d)", got, tc.wantForeign, o.Committed())
			}
			if !tc.wantForeign {
				// The next source commit is refreshed for its own sake.
				o.Notify(wakeUp{SourceVersion: 6})
			}
			f.gate <- struct{}{}
			waitUntil(t, "the second refresh", func() bool { calls, _ := f.snapshot(); return len(calls) == 2 })
			calls, _ := f.snapshot()
			if want := map[bool]uint64{false: 6, true: 0}[tc.wantForeign]; calls[1].SourceVersion != want {
				t.Fatalf("second refresh for source version %d, want %d", calls[1].SourceVersion, want)
			}
		})
	}
}
