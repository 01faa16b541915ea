package daemon

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// fakeRefresher stands in for a matview View in tests of the owner's
// scheduling: it records calls and answers as a view would.
type fakeRefresher struct {
	mu     sync.Mutex
	calls  []RefreshOptions
	starts []time.Time
	ctxs   []context.Context
	reflct uint64
	fail   func(call int) error // nil: succeed
	gate   chan struct{}        // non-nil: each refresh waits for a value (or its ctx)
	maint  int
}

func (f *fakeRefresher) Refresh(ctx context.Context, opts RefreshOptions) (RefreshResult, error) {
	f.mu.Lock()
	n := len(f.calls)
	f.calls = append(f.calls, opts)
	f.starts = append(f.starts, time.Now())
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
	mode := "incremental"
	if opts.SourceVersion == 0 {
		mode = "no_op"
	}
	return RefreshResult{Mode: mode, RowsWritten: 1, SourceVersion: f.reflct, Version: uint64(n + 1), CommittedAt: time.Now()}, nil
}

func (f *fakeRefresher) Maintain(ctx context.Context) error {
	f.mu.Lock()
	f.maint++
	f.mu.Unlock()
	return nil
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

func runOwner(t *testing.T, cfg OwnerConfig) (*Owner, context.CancelFunc, chan struct{}) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quietLog
	}
	if cfg.View == "" {
		cfg.View = "v"
	}
	o := NewOwner(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); o.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return o, cancel, done
}

func TestOwnerPolicies(t *testing.T) {
	tests := []struct {
		name   string
		policy Policy
		// wakes are sent in one burst; then the test waits for version
		// 20 to be reflected (or, for manual, checks it is not).
		check func(t *testing.T, calls []RefreshOptions, starts []time.Time, first time.Time)
	}{
		{name: "on-commit", policy: Policy{Mode: OnCommit}, check: func(t *testing.T, calls []RefreshOptions, starts []time.Time, first time.Time) {
			if len(calls) < 1 || len(calls) > 20 {
				t.Errorf("%d refreshes for 20 commits", len(calls))
			}
		}},
		{name: "debounce", policy: Policy{Mode: OnCommit, Debounce: 150 * time.Millisecond}, check: func(t *testing.T, calls []RefreshOptions, starts []time.Time, first time.Time) {
			if len(calls) != 1 {
				t.Errorf("%d refreshes for a burst inside one debounce window, want 1", len(calls))
			}
			if d := starts[0].Sub(first); d < 150*time.Millisecond {
				t.Errorf("refresh started %v after the first wake-up, before the debounce window", d)
			}
		}},
		{name: "interval", policy: Policy{Mode: Interval, Interval: 80 * time.Millisecond}, check: func(t *testing.T, calls []RefreshOptions, starts []time.Time, first time.Time) {
			for i := 1; i < len(starts); i++ {
				if d := starts[i].Sub(starts[i-1]); d < 80*time.Millisecond {
					t.Errorf("refreshes %d and %d started %v apart, under the interval", i-1, i, d)
				}
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeRefresher{}
			o, _, _ := runOwner(t, OwnerConfig{Refresher: f, Policy: tc.policy})
			first := time.Now()
			for v := uint64(1); v <= 20; v++ {
				o.Notify(Wake{SourceVersion: v, CommittedAt: time.Now()})
			}
			waitUntil(t, "version 20 reflected", func() bool { return f.reflected() == 20 })
			calls, starts := f.snapshot()
			tc.check(t, calls, starts, first)
		})
	}
}

// TestOwnerCoalescesBacklog: wake-ups arriving while a refresh runs make
// one more refresh, to the newest version, not one each.
func TestOwnerCoalescesBacklog(t *testing.T) {
	f := &fakeRefresher{gate: make(chan struct{})}
	o, _, _ := runOwner(t, OwnerConfig{Refresher: f})
	o.Notify(Wake{SourceVersion: 1})
	waitUntil(t, "first refresh started", func() bool { c, _ := f.snapshot(); return len(c) == 1 })
	for v := uint64(2); v <= 1000; v++ {
		o.Notify(Wake{SourceVersion: v})
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

// TestOwnerManual: a manual view ignores commits and refreshes on an
// explicit request only.
func TestOwnerManual(t *testing.T) {
	f := &fakeRefresher{}
	o, _, _ := runOwner(t, OwnerConfig{Refresher: f, Policy: Policy{Mode: Manual}, CatchUp: true})
	waitUntil(t, "checked", o.Checked)
	o.Notify(Wake{SourceVersion: 3})
	o.Notify(Wake{SourceVersion: 4})
	// Had the commits refreshed, the first call would be to version 3
	// and without the explicit request.
	o.Notify(Wake{Explicit: true})
	waitUntil(t, "explicit refresh", func() bool { c, _ := f.snapshot(); return len(c) == 1 })
	calls, _ := f.snapshot()
	if calls[0].SourceVersion != 4 {
		t.Fatalf("explicit refresh options %+v: want the backlog's version 4", calls[0])
	}
	// Switching to on-commit makes the next commit refresh by itself.
	o.SetPolicy(Policy{Mode: OnCommit})
	o.Notify(Wake{SourceVersion: 5})
	waitUntil(t, "on-commit after alter", func() bool { return f.reflected() == 5 })
}

// TestOwnerErrorsBackoff: failures are counted and retried with growing
// waits, the backlog is kept, and success resets everything.
func TestOwnerErrorsBackoff(t *testing.T) {
	m := NewMetrics()
	boom := errors.New("disk full")
	f := &fakeRefresher{fail: func(n int) error {
		if n < 3 {
			return boom
		}
		return nil
	}}
	var mu sync.Mutex
	var results []error
	o, _, _ := runOwner(t, OwnerConfig{Refresher: f, Metrics: m, MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
		OnRefresh: func(out Outcome) {
			mu.Lock()
			results = append(results, out.Err)
			mu.Unlock()
		}})
	o.Notify(Wake{SourceVersion: 7})
	waitUntil(t, "recovery reported", func() bool { mu.Lock(); defer mu.Unlock(); return len(results) == 4 })
	calls, starts := f.snapshot()
	if len(calls) != 4 {
		t.Fatalf("%d calls, want 3 failures and a success", len(calls))
	}
	for i := 1; i < 4; i++ {
		if d := starts[i].Sub(starts[i-1]); d < 10*time.Millisecond { // 20ms less jitter of 50%
			t.Errorf("retry %d after %v: no backoff", i, d)
		}
		if calls[i].SourceVersion != 7 {
			t.Errorf("retry %d lost the backlog: %+v", i, calls[i])
		}
	}
	if got := testutil.ToFloat64(m.refreshErrors.WithLabelValues("v", "")); got != 3 {
		t.Errorf("mvd_refresh_errors_total = %v, want 3", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) != 4 || !errors.Is(results[0], boom) || results[3] != nil {
		t.Errorf("OnRefresh saw %v", results)
	}
}

// TestOwnerConflictNotRetried: a conflict (another refresher did the
// work) is counted, not retried.
func TestOwnerConflictNotRetried(t *testing.T) {
	m := NewMetrics()
	errConflict := errors.New("conflict")
	f := &fakeRefresher{fail: func(n int) error {
		if n == 0 {
			return errConflict
		}
		return nil
	}}
	o, _, _ := runOwner(t, OwnerConfig{Refresher: f, Metrics: m, IsConflict: func(err error) bool { return errors.Is(err, errConflict) }})
	o.Notify(Wake{SourceVersion: 2})
	waitUntil(t, "conflict counted", func() bool { return testutil.ToFloat64(m.refreshConflicts.WithLabelValues("v", "")) == 1 })
	o.Notify(Wake{SourceVersion: 3})
	waitUntil(t, "next refresh", func() bool { return f.reflected() == 3 })
	calls, _ := f.snapshot()
	if len(calls) != 2 || testutil.ToFloat64(m.refreshErrors.WithLabelValues("v", "")) != 0 {
		t.Fatalf("calls %v, errors %v", calls, testutil.ToFloat64(m.refreshErrors.WithLabelValues("v", "")))
	}
}

// TestOwnerFreshnessAndMaintenance: lag over the target is counted; the
// maintenance step runs between refreshes when nothing waits.
func TestOwnerFreshnessAndMaintenance(t *testing.T) {
	m := NewMetrics()
	f := &fakeRefresher{}
	o, _, _ := runOwner(t, OwnerConfig{Refresher: f, Metrics: m, Policy: Policy{Mode: OnCommit, FreshnessTarget: time.Second}})
	o.Notify(Wake{SourceVersion: 1, CommittedAt: time.Now().Add(-5 * time.Second)}) // noticed late
	waitUntil(t, "refresh", func() bool { return f.reflected() == 1 })
	waitUntil(t, "miss counted", func() bool { return testutil.ToFloat64(m.freshnessMissed.WithLabelValues("v", "")) == 1 })
	if lag := testutil.ToFloat64(m.viewLag.WithLabelValues("v", "")); lag < 5 {
		t.Errorf("lag %v, want >= 5s", lag)
	}
	o.Notify(Wake{SourceVersion: 2, CommittedAt: time.Now()})
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
		o, cancel, done := runOwner(t, OwnerConfig{Refresher: f})
		o.Notify(Wake{SourceVersion: 1})
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
		o, cancel, done := runOwner(t, OwnerConfig{Refresher: f, RefreshContext: hard})
		o.Notify(Wake{SourceVersion: 1})
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
		policy   Policy
		pending  pendingWork
		setup    func(o *Owner)
		wantDue  bool
		wantWait time.Duration
	}{
		{name: "nothing pending", policy: Policy{}, pending: pendingWork{}, wantWait: 0},
		{name: "on-commit", policy: Policy{}, pending: pendingWork{has: true, firstAt: now}, wantDue: true},
		{name: "debounce", policy: Policy{Debounce: 20 * ms}, pending: pendingWork{has: true, firstAt: now.Add(-5 * ms)}, wantWait: 15 * ms},
		{name: "debounce over", policy: Policy{Debounce: 20 * ms}, pending: pendingWork{has: true, firstAt: now.Add(-25 * ms)}, wantDue: true},
		{name: "interval", policy: Policy{Mode: Interval, Interval: time.Second}, pending: pendingWork{has: true, firstAt: now},
			setup: func(o *Owner) { o.lastStart = now.Add(-300 * ms) }, wantWait: 700 * ms},
		{name: "interval first", policy: Policy{Mode: Interval, Interval: time.Second}, pending: pendingWork{has: true, firstAt: now}, wantDue: true},
		{name: "manual ignores commits", policy: Policy{Mode: Manual}, pending: pendingWork{has: true, firstAt: now}, wantWait: 0},
		{name: "manual explicit", policy: Policy{Mode: Manual}, pending: pendingWork{has: true, explicit: true}, wantDue: true},
		{name: "explicit skips debounce", policy: Policy{Debounce: time.Second}, pending: pendingWork{has: true, firstAt: now, explicit: true}, wantDue: true},
		{name: "backoff", policy: Policy{}, pending: pendingWork{has: true, explicit: true},
			setup: func(o *Owner) { o.retryAt = now.Add(40 * ms) }, wantWait: 40 * ms},
		{name: "burst", policy: Policy{}, pending: pendingWork{has: true, firstAt: now},
			setup: func(o *Owner) { o.burst, o.lastEnd, o.lastTook = true, now.Add(-ms), 10*ms }, wantWait: 39 * ms},
		{name: "burst capped", policy: Policy{}, pending: pendingWork{has: true, firstAt: now},
			setup: func(o *Owner) { o.burst, o.lastEnd, o.lastTook = true, now, time.Second }, wantWait: maxBurstWait},
		{name: "burst under freshness target", policy: Policy{FreshnessTarget: 40 * ms}, pending: pendingWork{has: true, firstAt: now},
			setup: func(o *Owner) { o.burst, o.lastEnd, o.lastTook = true, now, time.Second }, wantWait: 10 * ms},
		{name: "burst over", policy: Policy{}, pending: pendingWork{has: true, firstAt: now},
			setup: func(o *Owner) { o.burst, o.lastEnd, o.lastTook = true, now.Add(-time.Second), 10*ms }, wantDue: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOwner(OwnerConfig{View: "v", Refresher: &fakeRefresher{}, Policy: tc.policy, Logger: quietLog})
			o.pending = tc.pending
			if tc.setup != nil {
				tc.setup(o)
			}
			work, wait := o.due(now)
			if work.has != tc.wantDue || wait != tc.wantWait {
				t.Errorf("due = %v, wait %v; want %v, %v", work.has, wait, tc.wantDue, tc.wantWait)
			}
			if work.has && o.pending.has {
				t.Error("work taken but still pending")
			}
		})
	}
}

// TestBurstRate: burst coalescing follows the source's commit rate, not
// the commits a refresh took (which the burst wait itself inflates).
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
			o := NewOwner(OwnerConfig{View: "v", Refresher: nil})
			var v uint64 = 10
			for range 8 {
				v += tc.perCycle
				o.measureRate(v, t0.Add(time.Duration(v)*tc.gap))
			}
			if got := o.bursting(tc.took); got != tc.wantBurst {
				t.Errorf("burst = %v (commit gap %v, refresh %v), want %v", got, o.commitGap, tc.took, tc.wantBurst)
			}
			if o.commitGap != tc.gap {
				t.Errorf("commit gap %v, want %v", o.commitGap, tc.gap)
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
	o, _, _ := runOwner(t, OwnerConfig{Refresher: f, MinBackoff: time.Hour, MaxBackoff: time.Hour})
	o.Notify(Wake{SourceVersion: 3})
	waitUntil(t, "the failed refresh", func() bool { c, _ := f.snapshot(); return len(c) == 1 })
	o.Notify(Wake{SourceVersion: 4}) // waits for the hour of backoff
	o.Notify(Wake{SourceVersion: 1, Full: true, Retry: true})
	waitUntil(t, "the retry", func() bool { c, _ := f.snapshot(); return len(c) == 2 })
	calls, _ := f.snapshot()
	if !calls[1].Full || calls[1].SourceVersion != 4 {
		t.Fatalf("retry %+v, want a full refresh to version 4", calls[1])
	}
}
