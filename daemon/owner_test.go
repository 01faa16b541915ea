package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mvd-project/mvd/matview"
)

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// fakeRefresher stands in for a matview View in tests of the owner's
// scheduling: it records calls and answers as a view would.
type fakeRefresher struct {
	mu      sync.Mutex
	calls   []RefreshOptions
	starts  []time.Time
	ctxs    []context.Context
	reflct  uint64
	fail    func(call int) error // nil: succeed
	gate    chan struct{}        // non-nil: each refresh waits for a value (or its ctx)
	maint   int
	clock   clock  // nil: the wall clock
	version uint64 // the view version of the last successful refresh
}

func (f *fakeRefresher) now() time.Time {
	if f.clock == nil {
		return time.Now()
	}
	return f.clock.Now()
}

func (f *fakeRefresher) Refresh(ctx context.Context, opts RefreshOptions) (RefreshResult, error) {
	f.mu.Lock()
	n := len(f.calls)
	f.calls = append(f.calls, opts)
	f.starts = append(f.starts, f.now())
	f.ctxs = append(f.ctxs, ctx)
	fail, gate := f.fail, f.gate
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return RefreshResult{}, ctx.Err()
		}
	}
	if fail != nil {
		if err := fail(n); err != nil {
			return RefreshResult{}, err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reflct = max(f.reflct, opts.SourceVersion)
	f.version = uint64(n + 1)
	mode := "incremental"
	if opts.SourceVersion == 0 {
		mode = "no_op"
	}
	return RefreshResult{Mode: mode, RowsWritten: 1, SourceVersion: f.reflct, Version: uint64(n + 1), CommittedAt: f.now()}, nil
}

func (f *fakeRefresher) Maintain(ctx context.Context) (Maintenance, error) {
	f.mu.Lock()
	f.maint++
	f.mu.Unlock()
	return Maintenance{}, nil
}

func (f *fakeRefresher) snapshot() ([]RefreshOptions, []time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]RefreshOptions(nil), f.calls...), append([]time.Time(nil), f.starts...)
}

func (f *fakeRefresher) reflected() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reflct
}

// waitUntil polls cond until it holds, failing after a generous deadline.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	start := time.Now()
	defer func() {
		if d := time.Since(start); d > 200*time.Millisecond {
			t.Logf("waited %v for %s", d.Round(time.Millisecond), what)
		}
	}()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func runOwner(t *testing.T, cfg ownerConfig) (*viewOwner, context.CancelFunc, chan struct{}) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quietLog
	}
	if cfg.View == "" {
		cfg.View = "v"
	}
	o := newOwner(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); o.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return o, cancel, done
}

// TestOwnerPolicies: each policy does what it promises, on a clock that
// moves only when the test says.
func TestOwnerPolicies(t *testing.T) {
	ms := time.Millisecond
	t.Run("on-commit", func(t *testing.T) {
		// Every commit is served at once: the clock never moves, and
		// version 20 is reflected with every refresh starting at t0.
		c := newManualClock()
		f := &fakeRefresher{clock: c}
		o, _, _ := runOwner(t, ownerConfig{Refresher: f, Policy: matview.Policy{Mode: matview.OnCommit}, clock: c})
		t0 := c.Now()
		for v := uint64(1); v <= 20; v++ {
			o.Notify(wakeUp{SourceVersion: v, CommittedAt: t0})
		}
		waitUntil(t, "version 20 reflected", func() bool { return f.reflected() == 20 })
		calls, starts := f.snapshot()
		if len(calls) < 1 || len(calls) > 20 {
			t.Errorf("%d refreshes for 20 commits", len(calls))
		}
		for i, s := range starts {
			if !s.Equal(t0) {
				t.Errorf("refresh %d started %v after the commits, want at once", i, s.Sub(t0))
			}
		}
	})
	t.Run("debounce", func(t *testing.T) {
		// A burst inside one window is one refresh, exactly when the
		// window ends.
		c := newManualClock()
		f := &fakeRefresher{clock: c}
		o, _, _ := runOwner(t, ownerConfig{Refresher: f, Policy: matview.Policy{Mode: matview.OnCommit, Debounce: 150 * ms}, clock: c})
		t0 := c.Now()
		o.Notify(wakeUp{SourceVersion: 1})
		c.Advance(100 * ms)
		for v := uint64(2); v <= 20; v++ {
			o.Notify(wakeUp{SourceVersion: v})
		}
		c.waitTimer(t, t0.Add(150*ms))
		c.Advance(49 * ms)
		if calls, _ := f.snapshot(); len(calls) != 0 {
			t.Fatalf("refreshed %d times inside the debounce window", len(calls))
		}
		c.Advance(ms)
		waitUntil(t, "version 20 reflected", func() bool { return f.reflected() == 20 })
		calls, starts := f.snapshot()
		if len(calls) != 1 || !starts[0].Equal(t0.Add(150*ms)) {
			t.Errorf("%d refreshes, first at %v: want one, when the window ends (150ms)", len(calls), starts[0].Sub(t0))
		}
	})
	t.Run("interval", func(t *testing.T) {
		// The first commit refreshes at once; later ones wait for the
		// interval since the last refresh's start, and no longer.
		c := newManualClock()
		f := &fakeRefresher{clock: c}
		o, _, _ := runOwner(t, ownerConfig{Refresher: f, Policy: matview.Policy{Mode: matview.Interval, Interval: 80 * ms}, clock: c})
		t0 := c.Now()
		v := uint64(1)
		o.Notify(wakeUp{SourceVersion: v})
		waitUntil(t, "first refresh", func() bool { return f.reflected() == v })
		for cycle := 1; cycle <= 5; cycle++ {
			c.Advance(30 * ms) // a commit 30ms into the interval
			v++
			o.Notify(wakeUp{SourceVersion: v})
			due := t0.Add(time.Duration(cycle) * 80 * ms)
			c.waitTimer(t, due)
			c.Advance(49 * ms)
			if f.reflected() == v {
				t.Fatalf("cycle %d: refreshed before the interval", cycle)
			}
			c.Advance(ms)
			waitUntil(t, "refresh at the interval", func() bool { return f.reflected() == v })
		}
		_, starts := f.snapshot()
		if len(starts) != 6 {
			t.Fatalf("%d refreshes, want 6", len(starts))
		}
		for i := 1; i < len(starts); i++ {
			if d := starts[i].Sub(starts[i-1]); d != 80*ms {
				t.Errorf("refreshes %d and %d started %v apart, want the interval", i-1, i, d)
			}
		}
	})
}

// TestOwnerCoalescesBacklog: wake-ups arriving while a refresh runs make
// one more refresh, to the newest version, not one each.
func TestOwnerCoalescesBacklog(t *testing.T) {
	f := &fakeRefresher{gate: make(chan struct{})}
	o, _, _ := runOwner(t, ownerConfig{Refresher: f})
	o.Notify(wakeUp{SourceVersion: 1})
	waitUntil(t, "first refresh started", func() bool { c, _ := f.snapshot(); return len(c) == 1 })
	for v := uint64(2); v <= 1000; v++ {
		o.Notify(wakeUp{SourceVersion: v})
	}
	f.gate <- struct{}{} // first refresh ends
	waitUntil(t, "second refresh started", func() bool { c, _ := f.snapshot(); return len(c) == 2 })
	f.gate <- struct{}{}
	waitUntil(t, "version 1000 reflected", func() bool { return f.reflected() == 1000 })
	calls, _ := f.snapshot()
	if len(calls) != 2 || calls[1].SourceVersion != 1000 {
		t.Fatalf("calls %v: want two, the second to version 1000", calls)
	}
	if !o.Checked() {
		t.Error("not checked after refreshing")
	}
}

// TestOwnerManual: a manual view ignores commits; switching it to an
// automatic policy catches up with the commits it ignored at once, without
// waiting for the next one.
func TestOwnerManual(t *testing.T) {
	f := &fakeRefresher{}
	o, _, _ := runOwner(t, ownerConfig{Refresher: f, Policy: matview.Policy{Mode: matview.Manual}, CatchUp: true})
	waitUntil(t, "checked", o.Checked)
	o.Notify(wakeUp{SourceVersion: 3})
	o.Notify(wakeUp{SourceVersion: 4})
	// Had the commits refreshed, the first call would be to version 3.
	o.SetPolicy(matview.Policy{Mode: matview.OnCommit})
	waitUntil(t, "catch-up after the switch", func() bool { c, _ := f.snapshot(); return len(c) == 1 })
	calls, _ := f.snapshot()
	if calls[0].SourceVersion != 4 {
		t.Fatalf("refresh options %+v: want the backlog's version 4", calls[0])
	}
	o.Notify(wakeUp{SourceVersion: 5})
	waitUntil(t, "on-commit after alter", func() bool { return f.reflected() == 5 })
}

// outcomes collects what OnRefresh reports.
type outcomes struct {
	mu  sync.Mutex
	all []Outcome
}

func (r *outcomes) add(o Outcome) {
	r.mu.Lock()
	r.all = append(r.all, o)
	r.mu.Unlock()
}

func (r *outcomes) get() []Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Outcome(nil), r.all...)
}

func (r *outcomes) wait(t *testing.T, n int) []Outcome {
	t.Helper()
	waitUntil(t, fmt.Sprintf("%d outcomes", n), func() bool { return len(r.get()) >= n })
	return r.get()
}

// TestOwnerErrorsBackoff: failures are counted and retried after growing
// waits that never pass the cap, the backlog is kept, a failure is
// reported as news once per distinct error with where the view still is,
// and the success that ends them says what it cleared.
func TestOwnerErrorsBackoff(t *testing.T) {
	m := newMetrics()
	c := newManualClock()
	diskFull, gone := errors.New("disk full"), errors.New("source gone")
	const failing = 6
	f := &fakeRefresher{clock: c, fail: func(n int) error {
		switch {
		case n == 0:
			return nil // the view is at version 1, source version 7
		case n < 4:
			return diskFull
		case n < failing:
			return gone
		}
		return nil
	}}
	var got outcomes
	o, _, _ := runOwner(t, ownerConfig{Refresher: wmRefresher{f}, Metrics: m, MinBackoff: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
		OnRefresh: got.add, clock: c})
	o.Notify(wakeUp{SourceVersion: 7})
	got.wait(t, 1)
	o.Notify(wakeUp{SourceVersion: 8})
	var waits []time.Duration
	for i := 1; i <= failing; i++ {
		outs := got.wait(t, 1+i)
		last := outs[len(outs)-1]
		if i == failing {
			break
		}
		at := c.nextTimer(t)
		waits = append(waits, at.Sub(c.Now()))
		if last.RetryIn != at.Sub(c.Now()) {
			t.Errorf("failure %d reported a retry in %v, scheduled in %v", i, last.RetryIn, at.Sub(c.Now()))
		}
		c.Advance(at.Sub(c.Now()))
	}
	outs := got.get()
	for i, w := range waits {
		if w < 10*time.Millisecond || w > 50*time.Millisecond {
			t.Errorf("retry %d after %v: want within [10ms, 50ms] (backoff with jitter, capped)", i+1, w)
		}
	}
	calls, _ := f.snapshot()
	for i := 1; i < len(calls); i++ {
		if calls[i].SourceVersion != 8 {
			t.Errorf("attempt %d lost the backlog: %+v", i, calls[i])
		}
	}
	for i, out := range outs[1:failing] {
		if out.Err == nil || out.Retries != i || out.Result.Version != 1 || out.Result.SourceVersion != 7 {
			t.Errorf("failure %d: %+v; want retries %d at view version 1, source version 7", i+1, out, i)
		}
		// News: the first failure, and the first with another error.
		if want := i != 0 && i != 3; out.Repeated != want {
			t.Errorf("failure %d (%v): repeated %v, want %v", i+1, out.Err, out.Repeated, want)
		}
	}
	if last := outs[failing]; last.Err != nil || last.Retries != failing-1 || last.Cleared != gone.Error() {
		t.Errorf("recovery: %+v; want success after %d retries clearing %q", last, failing-1, gone)
	}
	if got := testutil.ToFloat64(m.refreshErrors.WithLabelValues("v", "")); got != failing-1 {
		t.Errorf("mvd_refresh_errors_total = %v, want %d", got, failing-1)
	}
}

// TestOwnerBackoffCap: however long a view fails, no retry waits longer
// than the cap (the library's jitter alone goes 50% past it).
func TestOwnerBackoffCap(t *testing.T) {
	c := newManualClock()
	f := &fakeRefresher{clock: c, fail: func(int) error { return errors.New("disk full") }}
	var got outcomes
	o, _, _ := runOwner(t, ownerConfig{Refresher: f, MinBackoff: 100 * time.Millisecond, MaxBackoff: 30 * time.Second, OnRefresh: got.add, clock: c})
	o.Notify(wakeUp{SourceVersion: 1})
	for i := 1; i <= 40; i++ {
		got.wait(t, i)
		at := c.nextTimer(t)
		if w := at.Sub(c.Now()); w > 30*time.Second {
			t.Fatalf("retry %d scheduled in %v, past the 30s cap", i, w)
		}
		c.Advance(at.Sub(c.Now()))
	}
}

// TestOwnerConflictNotRetried: a conflict (another refresher did the
// work) is counted, not retried.
func TestOwnerConflictNotRetried(t *testing.T) {
	m := newMetrics()
	errConflict := errors.New("conflict")
	f := &fakeRefresher{fail: func(n int) error {
		if n == 0 {
			return errConflict
		}
		return nil
	}}
	o, _, _ := runOwner(t, ownerConfig{Refresher: f, Metrics: m, IsConflict: func(err error) bool { return errors.Is(err, errConflict) }})
	o.Notify(wakeUp{SourceVersion: 2})
	waitUntil(t, "conflict counted", func() bool { return testutil.ToFloat64(m.refreshConflicts.WithLabelValues("v", "")) == 1 })
	o.Notify(wakeUp{SourceVersion: 3})
	waitUntil(t, "next refresh", func() bool { return f.reflected() == 3 })
	calls, _ := f.snapshot()
	if len(calls) != 2 || testutil.ToFloat64(m.refreshErrors.WithLabelValues("v", "")) != 0 {
		t.Fatalf("calls %v, errors %v", calls, testutil.ToFloat64(m.refreshErrors.WithLabelValues("v", "")))
	}
}

// TestOwnerFreshnessAndMaintenance: lag over the target is counted; the
// maintenance step runs between refreshes when nothing waits.
func TestOwnerFreshnessAndMaintenance(t *testing.T) {
	m := newMetrics()
	f := &fakeRefresher{}
	o, _, _ := runOwner(t, ownerConfig{Refresher: f, Metrics: m, Policy: matview.Policy{Mode: matview.OnCommit, FreshnessTarget: time.Second}})
	o.Notify(wakeUp{SourceVersion: 1, CommittedAt: time.Now().Add(-5 * time.Second)}) // noticed late
	waitUntil(t, "refresh", func() bool { return f.reflected() == 1 })
	waitUntil(t, "miss counted", func() bool { return testutil.ToFloat64(m.freshnessMissed.WithLabelValues("v", "")) == 1 })
	if lag := testutil.ToFloat64(m.viewLag.WithLabelValues("v", "")); lag < 5 {
		t.Errorf("lag %v, want >= 5s", lag)
	}
	o.Notify(wakeUp{SourceVersion: 2, CommittedAt: time.Now()})
	waitUntil(t, "refresh 2", func() bool { return f.reflected() == 2 })
	waitUntil(t, "maintenance", func() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.maint == 2 })
	if got := testutil.ToFloat64(m.freshnessMissed.WithLabelValues("v", "")); got != 1 {
		t.Errorf("misses %v after a fresh refresh, want still 1", got)
	}
}

// TestOwnerDrain: stopping Run lets the refresh in flight finish with an
// uncancelled context; cancelling the refresh context stops it.
func TestOwnerDrain(t *testing.T) {
	t.Run("drain", func(t *testing.T) {
		f := &fakeRefresher{gate: make(chan struct{})}
		o, cancel, done := runOwner(t, ownerConfig{Refresher: f})
		o.Notify(wakeUp{SourceVersion: 1})
		waitUntil(t, "refresh started", func() bool { c, _ := f.snapshot(); return len(c) == 1 })
		cancel()
		select {
		case <-done:
			t.Fatal("Run returned with a refresh in flight")
		case <-time.After(20 * time.Millisecond):
		}
		f.gate <- struct{}{}
		<-done
		if f.reflected() != 1 || f.ctxs[0].Err() != nil {
			t.Fatalf("the refresh in flight did not complete")
		}
	})
	t.Run("hard", func(t *testing.T) {
		f := &fakeRefresher{gate: make(chan struct{})}
		hard, stop := context.WithCancel(context.Background())
		o, cancel, done := runOwner(t, ownerConfig{Refresher: f, RefreshContext: hard})
		o.Notify(wakeUp{SourceVersion: 1})
		waitUntil(t, "refresh started", func() bool { c, _ := f.snapshot(); return len(c) == 1 })
		cancel()
		stop()
		<-done
		if f.reflected() != 0 {
			t.Fatal("a hard stop let the refresh finish")
		}
	})
}

// TestOwnerDue is the scheduling rule itself: when pending work is due
// under each policy and state.
func TestOwnerDue(t *testing.T) {
	now := time.Unix(1000, 0)
	ms := time.Millisecond
	tests := []struct {
		name     string
		policy   matview.Policy
		pending  pendingWork
		sched    schedule
		burst    burst
		wantDue  bool
		wantWait time.Duration
	}{
		{name: "nothing pending", policy: matview.Policy{}, pending: pendingWork{}, wantWait: 0},
		{name: "on-commit", policy: matview.Policy{}, pending: pendingWork{has: true, firstAt: now}, wantDue: true},
		{name: "debounce", policy: matview.Policy{Debounce: 20 * ms}, pending: pendingWork{has: true, firstAt: now.Add(-5 * ms)}, wantWait: 15 * ms},
		{name: "debounce over", policy: matview.Policy{Debounce: 20 * ms}, pending: pendingWork{has: true, firstAt: now.Add(-25 * ms)}, wantDue: true},
		{name: "catch-up skips debounce", policy: matview.Policy{Debounce: time.Second}, pending: pendingWork{has: true}, wantDue: true},
		{name: "interval", policy: matview.Policy{Mode: matview.Interval, Interval: time.Second}, pending: pendingWork{has: true, firstAt: now},
			sched: schedule{lastStart: now.Add(-300 * ms)}, wantWait: 700 * ms},
		{name: "interval first", policy: matview.Policy{Mode: matview.Interval, Interval: time.Second}, pending: pendingWork{has: true, firstAt: now}, wantDue: true},
		{name: "manual ignores commits", policy: matview.Policy{Mode: matview.Manual}, pending: pendingWork{has: true, firstAt: now}, wantWait: 0},
		{name: "backoff", policy: matview.Policy{}, pending: pendingWork{has: true},
			sched: schedule{retryAt: now.Add(40 * ms)}, wantWait: 40 * ms},
		{name: "retry skips backoff", policy: matview.Policy{}, pending: pendingWork{has: true, retry: true},
			sched: schedule{retryAt: now.Add(40 * ms)}, wantDue: true},
		{name: "hold", policy: matview.Policy{}, pending: pendingWork{has: true},
			sched: schedule{holdUntil: now.Add(2 * time.Second)}, wantWait: 2 * time.Second},
		{name: "hold over", policy: matview.Policy{}, pending: pendingWork{has: true},
			sched: schedule{holdUntil: now.Add(-ms)}, wantDue: true},
		{name: "burst", policy: matview.Policy{}, pending: pendingWork{has: true, firstAt: now},
			burst: burst{on: true, lastEnd: now.Add(-ms), lastTook: 10 * ms}, wantWait: 39 * ms},
		{name: "burst capped", policy: matview.Policy{}, pending: pendingWork{has: true, firstAt: now},
			burst: burst{on: true, lastEnd: now, lastTook: time.Second}, wantWait: maxBurstWait},
		{name: "burst under freshness target", policy: matview.Policy{FreshnessTarget: 40 * ms}, pending: pendingWork{has: true, firstAt: now},
			burst: burst{on: true, lastEnd: now, lastTook: time.Second}, wantWait: 10 * ms},
		{name: "burst over", policy: matview.Policy{}, pending: pendingWork{has: true, firstAt: now},
			burst: burst{on: true, lastEnd: now.Add(-time.Second), lastTook: 10 * ms}, wantDue: true},
		{name: "burst, interval policy", policy: matview.Policy{Mode: matview.Interval, Interval: ms}, pending: pendingWork{has: true, firstAt: now},
			burst: burst{on: true, lastEnd: now, lastTook: 10 * ms}, wantDue: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, wait := due(tc.pending, tc.policy, tc.sched, tc.burst.until(tc.policy), now)
			if ok != tc.wantDue || wait != tc.wantWait {
				t.Errorf("due = %v, wait %v; want %v, %v", ok, wait, tc.wantDue, tc.wantWait)
			}
		})
	}
}

// TestBurstRate: burst coalescing follows the source's commit rate, not
// the commits a refresh took (which the burst wait itself inflates), and
// waits only once a burst has lasted.
func TestBurstRate(t *testing.T) {
	ms := time.Millisecond
	t0 := time.Unix(1_000_000, 0)
	for _, tc := range []struct {
		name      string
		gap       time.Duration // between source commits
		perCycle  uint64        // commits each refresh takes
		took      time.Duration // each refresh's duration
		wantBurst bool
	}{
		{name: "steady writer, slow refresh taking two", gap: 70 * ms, perCycle: 2, took: 60 * ms},
		{name: "steady writer, fast refresh", gap: 70 * ms, perCycle: 1, took: 20 * ms},
		{name: "back to back", gap: 10 * ms, perCycle: 4, took: 30 * ms, wantBurst: true},
		{name: "about as fast as the refreshes", gap: 20 * ms, perCycle: 1, took: 30 * ms},
		{name: "back to back, one each", gap: 10 * ms, perCycle: 1, took: 30 * ms, wantBurst: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b burst
			var v uint64 = 10
			for i := range 8 {
				v += tc.perCycle
				start := t0.Add(time.Duration(v) * tc.gap)
				b.started(v, start)
				b.ended(tc.took, start.Add(tc.took))
				if i < burstAfter-1 && b.on {
					t.Fatalf("burst wait on after %d refreshes", i+1)
				}
			}
			if got := b.bursting(tc.took); got != tc.wantBurst || b.on != tc.wantBurst {
				t.Errorf("burst = %v, on %v (commit gap %v, refresh %v), want %v", got, b.on, b.commitGap, tc.took, tc.wantBurst)
			}
			if b.commitGap != tc.gap {
				t.Errorf("commit gap %v, want %v", b.commitGap, tc.gap)
			}
		})
	}
}

// TestOwnerRetryWake: a wake-up that says the failure's cause may be gone
// (the source appeared again) runs the retry at once, not after the
// backoff; an ordinary wake-up waits for it.
func TestOwnerRetryWake(t *testing.T) {
	boom := errors.New("Table 'src' was not found")
	f := &fakeRefresher{fail: func(n int) error {
		if n == 0 {
			return boom
		}
		return nil
	}}
	o, _, _ := runOwner(t, ownerConfig{Refresher: f, MinBackoff: time.Hour, MaxBackoff: time.Hour})
	o.Notify(wakeUp{SourceVersion: 3})
	waitUntil(t, "the failed refresh", func() bool { c, _ := f.snapshot(); return len(c) == 1 })
	o.Notify(wakeUp{SourceVersion: 4}) // waits for the hour of backoff
	o.Notify(wakeUp{SourceVersion: 1, Full: true, Retry: true})
	waitUntil(t, "the retry", func() bool { c, _ := f.snapshot(); return len(c) == 2 })
	calls, _ := f.snapshot()
	if !calls[1].Full || calls[1].SourceVersion != 4 {
		t.Fatalf("retry %+v, want a full refresh to version 4", calls[1])
	}
}
