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
