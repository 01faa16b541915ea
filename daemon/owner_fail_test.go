package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/vfs"
)

// TestOwnerFailureWithNewerWork: a refresh that fails while newer commits
// queue up is retried once, after the backoff, for the newest version.
func TestOwnerFailureWithNewerWork(t *testing.T) {
	c := newManualClock()
	f := &fakeRefresher{clock: c, gate: make(chan struct{}), fail: func(n int) error {
		if n == 0 {
			return errors.New("disk full")
		}
		return nil
	}}
	o, _, _ := runOwner(t, ownerConfig{Refresher: f, MinBackoff: 40 * time.Millisecond, MaxBackoff: 40 * time.Millisecond, clock: c})
	o.Notify(wakeUp{SourceVersion: 1})
	waitUntil(t, "first refresh started", func() bool { calls, _ := f.snapshot(); return len(calls) == 1 })
	for v := uint64(2); v <= 5; v++ {
		o.Notify(wakeUp{SourceVersion: v})
	}
	f.gate <- struct{}{} // fails
	at := c.nextTimer(t)
	if w := at.Sub(c.Now()); w < 20*time.Millisecond || w > 40*time.Millisecond {
		t.Fatalf("retry in %v, want the backoff (20..40ms), not the queued work at once", w)
	}
	c.Advance(at.Sub(c.Now()))
	f.gate <- struct{}{}
	waitUntil(t, "version 5 reflected", func() bool { return f.reflected() == 5 })
	if calls, _ := f.snapshot(); len(calls) != 2 || calls[1].SourceVersion != 5 {
		t.Fatalf("calls %+v: want the failure and one retry to version 5", calls)
	}
}

// TestOwnerCoveredWake: wake-ups for versions a refresh already reflects
// are dropped when it ends (the owner goes idle, maintenance runs).
func TestOwnerCoveredWake(t *testing.T) {
	f := &fakeRefresher{gate: make(chan struct{})}
	o, _, _ := runOwner(t, ownerConfig{Refresher: f})
	o.Notify(wakeUp{SourceVersion: 5})
	waitUntil(t, "refresh started", func() bool { calls, _ := f.snapshot(); return len(calls) == 1 })
	o.Notify(wakeUp{SourceVersion: 3}) // older than what the refresh reflects
	f.gate <- struct{}{}
	waitUntil(t, "maintenance (idle)", func() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.maint == 1 })
	if calls, _ := f.snapshot(); len(calls) != 1 {
		t.Fatalf("%d refreshes: a covered wake-up refreshed again", len(calls))
	}
}

// badWatermark is a refresher whose view cannot be read.
type badWatermark struct {
	*fakeRefresher
	reads atomic.Int32
}

func (r *badWatermark) Watermark(context.Context) (ViewState, error) {
	r.reads.Add(1)
	return ViewState{}, errors.New("read view: i/o error")
}

// TestOwnerWatermarkReadFails: when the view's watermark cannot be read
// the owner falls back on its own last refresh's, keeps asking (it is no
// longer known to be the view's), and a failure still reports where the
// owner last left the view.
func TestOwnerWatermarkReadFails(t *testing.T) {
	f := &fakeRefresher{}
	r := &badWatermark{fakeRefresher: f}
	var got outcomes
	o, _, _ := runOwner(t, ownerConfig{Refresher: r, Incarnation: func() string { return "i" }, OnRefresh: got.add, MinBackoff: time.Millisecond})
	d := &fakeDelivery{from: 0, to: 3, incarnation: "i"}
	s := newSettled(d)
	o.deliver(s)
	<-s.done
	if calls, _ := f.snapshot(); len(calls) != 1 || calls[0].Changes == nil {
		t.Fatalf("calls %+v: want one with the delivery's change set (from the fallback watermark 0)", calls)
	}
	o.ViewCommitted(2) // someone else committed: the owner's watermark is no longer trusted
	waitUntil(t, "the foreign commit's refresh", func() bool { calls, _ := f.snapshot(); return len(calls) == 2 })
	n := r.reads.Load()
	d = &fakeDelivery{from: 2, to: 3, incarnation: "i"}
	s = newSettled(d)
	o.deliver(s)
	<-s.done
	if r.reads.Load() == n {
		t.Error("the watermark was not asked again after a failed read")
	}
	if a, _ := d.settled(); a != 1 {
		t.Error("delivery covered by the owner's own watermark not acked")
	}
	f.mu.Lock()
	f.fail = func(int) error { return errors.New("disk full") }
	f.mu.Unlock()
	o.Notify(wakeUp{SourceVersion: 9})
	outs := got.wait(t, 3)
	if last := outs[2]; last.Err == nil || last.Result.Version != 2 || last.Result.SourceVersion != 3 {
		t.Errorf("failure reported %+v: want the owner's last known view version 2, source version 3", last.Result)
	}
}

// TestOwnerManualSwitchWithDelivery: switching a view to manual while a
// delivery waits acks it at once (the feed must not wait for a refresh
// that will not come); its versions stay in the backlog, without change
// sets, for a switch back.
func TestOwnerManualSwitchWithDelivery(t *testing.T) {
	f := &fakeRefresher{gate: make(chan struct{})}
	o, _, _ := runOwner(t, ownerConfig{Refresher: wmRefresher{f}, Incarnation: func() string { return "i" }})
	o.Notify(wakeUp{SourceVersion: 1})
	waitUntil(t, "refresh started", func() bool { calls, _ := f.snapshot(); return len(calls) == 1 })
	d := &fakeDelivery{from: 1, to: 4, incarnation: "i"}
	s := newSettled(d)
	o.deliver(s) // waits behind the refresh in flight
	o.SetPolicy(matview.Policy{Mode: matview.Manual})
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the delivery waits for a manual view's refresh")
	}
	if a, n := d.settled(); a != 1 || n != 0 {
		t.Fatalf("acks %d naks %d, want 1 0", a, n)
	}
	f.gate <- struct{}{}
	o.SetPolicy(matview.Policy{Mode: matview.OnCommit})
	f.gate <- struct{}{}
	waitUntil(t, "catch-up after switching back", func() bool { return f.reflected() == 4 })
	calls, _ := f.snapshot()
	if len(calls) != 2 || calls[1].Changes != nil {
		t.Fatalf("calls %+v: want a catch-up from the source (the delivery was already acked)", calls)
	}
}

// TestOwnerSettlesEndWithRun: Run returns only after the acks it started
// have ended; none is started after.
func TestOwnerSettlesEndWithRun(t *testing.T) {
	f := &fakeRefresher{}
	o, cancel, done := runOwner(t, ownerConfig{Refresher: f, Policy: matview.Policy{Mode: matview.Manual}, AckTimeout: 50 * time.Millisecond})
	d := &blockingDelivery{fakeDelivery: &fakeDelivery{to: 2}}
	o.deliver(newSettled(d))
	waitUntil(t, "ack under way", func() bool { return d.started.Load() })
	cancel()
	<-done
	if !d.ended.Load() {
		t.Fatal("Run returned while an ack it started was still running")
	}
	d2 := &fakeDelivery{to: 3}
	o.deliver(newSettled(d2))
	if a, _ := d2.settled(); a != 0 {
		t.Fatal("an ack was attempted after Run returned")
	}
}

// blockingDelivery's Ack blocks until its context ends.
type blockingDelivery struct {
	*fakeDelivery
	started, ended atomic.Bool
}

func (d *blockingDelivery) Ack(ctx context.Context) error {
	d.started.Store(true)
	defer d.ended.Store(true)
	<-ctx.Done()
	return ctx.Err()
}

// TestOwnerForeignCommit: a view commit the owner did not make (a refresh
// by hand to an old source version) applies the view's policy at once; the
// owner's own commits, seen during or after its refresh, do not.
func TestOwnerForeignCommit(t *testing.T) {
	f := &fakeRefresher{gate: make(chan struct{})}
	o, _, _ := runOwner(t, ownerConfig{Refresher: f})
	o.Notify(wakeUp{SourceVersion: 5})
	waitUntil(t, "refresh started", func() bool { calls, _ := f.snapshot(); return len(calls) == 1 })
	o.ViewCommitted(1) // its own commit (fake: version = call number), seen before Refresh returns
	f.gate <- struct{}{}
	waitUntil(t, "maintenance (idle)", func() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.maint == 1 })
	o.ViewCommitted(1) // seen again after
	o.ViewCommitted(2) // by hand: someone else's
	f.gate <- struct{}{}
	waitUntil(t, "the policy applied to the foreign commit", func() bool { calls, _ := f.snapshot(); return len(calls) == 2 })
	waitUntil(t, "maintenance (idle)", func() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.maint == 2 })
	if calls, _ := f.snapshot(); len(calls) != 2 {
		t.Fatalf("%d refreshes: want one for the source commit and one for the foreign view commit", len(calls))
	}
	// Manual: a foreign commit is left alone.
	o.SetPolicy(matview.Policy{Mode: matview.Manual})
	o.ViewCommitted(9)
	o.SetPolicy(matview.Policy{Mode: matview.OnCommit}) // the backlog it left is served
	f.gate <- struct{}{}
	waitUntil(t, "served after the switch back", func() bool { calls, _ := f.snapshot(); return len(calls) == 3 })
}

// TestOwnerHold: a view another writer just created is left to its
// creator until the hold ends, then caught up.
func TestOwnerHold(t *testing.T) {
	c := newManualClock()
	f := &fakeRefresher{clock: c}
	hold := c.Now().Add(2 * time.Second)
	o, _, _ := runOwner(t, ownerConfig{Refresher: f, CatchUp: true, HoldUntil: hold, clock: c})
	o.Notify(wakeUp{SourceVersion: 3})
	c.waitTimer(t, hold)
	c.Advance(2*time.Second - time.Millisecond)
	if calls, _ := f.snapshot(); len(calls) != 0 || o.Checked() {
		t.Fatalf("refreshed during the hold: %+v", calls)
	}
	c.Advance(time.Millisecond)
	waitUntil(t, "caught up after the hold", func() bool { return f.reflected() == 3 })
}

// TestOwnerReopensAfterNotDurable: a refresh that failed with
// vfs.ErrNotDurable poisoned its handle: the retry runs on a new one
// (opened once the condition clears), counted.
func TestOwnerReopensAfterNotDurable(t *testing.T) {
	m := newMetrics()
	poisoned := &fakeRefresher{fail: func(int) error {
		return fmt.Errorf("refresh view 'v': commit version 3: %w", vfs.ErrNotDurable)
	}}
	fresh := &fakeRefresher{}
	var opens atomic.Int32
	reopen := func(context.Context) (Refresher, error) {
		if opens.Add(1) == 1 {
			return nil, errors.New("open view: disk still failing")
		}
		return fresh, nil
	}
	o, _, _ := runOwner(t, ownerConfig{Refresher: poisoned, Reopen: reopen, Metrics: m, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	o.Notify(wakeUp{SourceVersion: 4})
	waitUntil(t, "refreshed on a new handle", func() bool { return fresh.reflected() == 4 })
	if calls, _ := poisoned.snapshot(); len(calls) != 1 {
		t.Errorf("the poisoned handle was used %d times", len(calls))
	}
	if got := testutil.ToFloat64(m.viewReopens.WithLabelValues("v", "")); got != 1 {
		t.Errorf("mvd_view_reopens_total = %v, want 1", got)
	}
}

// warningRefresher succeeds as fakeRefresher does, with a warning beside
// the commit (what matview reports when the provenance index was not
// saved).
type warningRefresher struct{ fakeRefresher }

func (w *warningRefresher) Refresh(ctx context.Context, o RefreshOptions) (RefreshResult, error) {
	res, err := w.fakeRefresher.Refresh(ctx, o)
	if err == nil {
		res.Warnings = []string{"provenance index not saved: no space left on device"}
	}
	return res, err
}

// TestOwnerLogsWarnings: a refresh that committed with a warning is a
// success (no retry), and the warning reaches the daemon's log.
func TestOwnerLogsWarnings(t *testing.T) {
	var mu sync.Mutex
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
	r := &warningRefresher{}
	o, _, _ := runOwner(t, ownerConfig{Refresher: r, Logger: log})
	o.Notify(wakeUp{SourceVersion: 2})
	waitUntil(t, "the warning logged", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(logs.String(), "no space left on device")
	})
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("warning not logged at WARN: %s", logs.String())
	}
	if calls, _ := r.snapshot(); len(calls) != 1 {
		t.Errorf("%d refreshes; a committed refresh with a warning is not retried", len(calls))
	}
}

// lockedWriter serializes writes to a buffer the test also reads.
type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
