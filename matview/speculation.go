package matview

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/mvd-project/mvd/lance"
)

// A refresh that most likely moves only the view's watermark stages that
// commit while it finds out (speculation), on two goroutines (handoff);
// a saturating counter predicts such refreshes (stampScore).

// handoff passes the source's head and the speculation staged on it (or
// nils) from a refresh's goroutine to its other one, once: give on one,
// wait on the other. The waiter polls before it blocks: blocked, it would
// leave its vCPU idle, to be woken as slowly as a new goroutine starts,
// while the head is read in about 0.1 ms. It polls for at most as long as
// a wake-up takes, measured (a waiter that blocked measures it): no spin
// can pay for more than the wake-up it saves, and the wake-up is a
// property of the machine, not a constant.
type handoff struct {
	spin  time.Duration
	ready atomic.Bool
	ch    chan struct{} // closed by give
	given time.Time     // when give handed over (before ch closed)
	spec  *speculation
	head  *lance.Head
}

// newHandoff returns a handoff whose wait polls for spin before blocking.
func newHandoff(spin time.Duration) *handoff {
	return &handoff{spin: spin, ch: make(chan struct{})}
}

// give hands spec and head over; it is called once.
func (h *handoff) give(spec *speculation, head *lance.Head) {
	h.spec, h.head = spec, head
	h.given = time.Now()
	h.ready.Store(true)
	close(h.ch)
}

// wait returns what give handed over, polling for h.spin (yielding to
// any other goroutine) before it blocks. woke is how long after the give
// a wait that blocked resumed (0: it did not block).
func (h *handoff) wait() (spec *speculation, head *lance.Head, woke time.Duration) {
	deadline := time.Now().Add(h.spin)
	for !h.ready.Load() {
		if time.Now().After(deadline) {
			<-h.ch
			woke = max(time.Since(h.given), time.Nanosecond)
			break
		}
		runtime.Gosched()
	}
	return h.spec, h.head, woke
}

// maxHandoffSpin bounds the measured spin: a wake-up slower than this is
// a loaded machine's, where polling would take a CPU from the work it
// waits for.
const maxHandoffSpin = time.Millisecond

// wakeup is a running estimate of how long a blocked handoff waiter
// takes to resume: the spin of the next handoff. It is safe for
// concurrent use (the waiter may outlive its refresh).
type wakeup struct{ ns atomic.Int64 }

// spin is the handoff's polling bound: the estimate, 0 before any.
func (w *wakeup) spin() time.Duration { return time.Duration(w.ns.Load()) }

// note adds one measured wake-up (0: none) to the estimate, an
// exponentially weighted mean (weight 1/4) that follows the machine.
func (w *wakeup) note(d time.Duration) {
	if d <= 0 {
		return
	}
	d = min(d, maxHandoffSpin)
	old := time.Duration(w.ns.Load())
	if old > 0 {
		d = old + (d-old)/4
	}
	w.ns.Store(int64(d))
}

// speculation is a commit of the watermark alone, staged (built, written
// and synced, not yet visible) while the refresh finds out whether that
// is all it has to commit. Most refreshes of a selective or capped view
// are: the rows that changed are not the view's. The staging's syncs,
// about half of such a refresh, then overlap reading the changes.
type speculation struct {
	stamp Watermark
	c     *lance.Commit
	done  chan struct{} // closed when the staging has ended
	sc    *lance.StagedCommit
	err   error
	// stager is set on a speculation staged by the refresh's first
	// goroutine while the other reads the changes (refresh): if they
	// leave the view as it is, the other hands the publish back (back is
	// the refresh's result but for the version, backCold whether the
	// index was built cold) and the first publishes once it has staged.
	stager   bool
	back     *Result
	backCold bool
	// prebuilt says the commit was staged from the one built ahead.
	prebuilt bool
}

// handedBack reports whether the publish of the speculation was handed
// back to its stager (nil: none).
func (sp *speculation) handedBack() bool { return sp != nil && sp.back != nil }

// newSpeculation returns the speculation of stamp on the view, staged
// into the refresh's prepared staging file, not yet started.
func (v *View) newSpeculation(stamp Watermark, prepared *lance.Prepared) *speculation {
	return &speculation{
		stamp: stamp,
		// Published, it is a watermark-only refresh: the next refresh
		// speculates, on the commit built ahead after this one.
		c:    &lance.Commit{SchemaMetadata: stamp.stamp(), Rebase: lance.RebaseNever, Prepared: prepared, DeferHint: true, DeferSync: !v.db.strict, Next: stamp.nextStamp()},
		done: make(chan struct{}),
	}
}

// stage stages the speculation's commit on vm.
func (sp *speculation) stage(ctx context.Context, t *lance.Table, vm *lance.Snapshot) {
	defer close(sp.done)
	// The commit built ahead after vm's, if it fits: its building and
	// encoding are then off the refresh's critical path.
	var ok bool
	if sp.sc, ok, sp.err = t.StagePrebuilt(ctx, vm, sp.c); ok {
		sp.prebuilt = true
		return
	}
	sp.sc, sp.err = t.Stage(ctx, vm, sp.c)
}

// stamps reports whether the speculation commits the watermark of w's
// source version (its refresh time is its own).
func (sp *speculation) stamps(w Watermark) bool {
	return sp.stamp.SourceVersion == w.SourceVersion && sp.stamp.SourceVersionTS == w.SourceVersionTS && sp.stamp.ViewVersion == w.ViewVersion
}

// stagesEarly reports whether the refresh stages its speculation as soon
// as the source's newest version is known (earlyHead): a plain refresh of
// an intact view expected to move only its watermark (speculates), with
// its source handle warm.
func (r *refreshRun) stagesEarly() bool {
	v := r.v
	return v.speculates() && !r.o.Full && r.o.SourceVersion == nil && r.intact && v.src != nil && v.srcName == r.def.SourceTable
}

// The prediction of watermark-only refreshes is a saturating counter, as
// branch predictors keep: one watermark-only refresh is enough to start
// speculating, and it takes two refreshes with rows in a row to stop. A
// selective view (a few rows of the source in ten) then speculates on
// the refresh after one that took a row too; a view that takes most
// changes never does. A wrong speculation costs a staging file and its
// sync, beside the commit.
const (
	stampScoreMax   = 3
	stampScoreStart = 2 // speculating from here up
)

// speculates reports whether the next refresh is expected to commit the
// watermark alone.
func (v *View) speculates() bool { return v.stampScore >= stampScoreStart }

// noteStampOnly records whether a refresh committed the watermark alone.
func (v *View) noteStampOnly(stampOnly bool) { v.stampScore = v.scoreAfter(stampOnly) }

// scoreAfter is the prediction's counter after a refresh that committed
// the watermark alone or not.
func (v *View) scoreAfter(stampOnly bool) int {
	switch {
	case stampOnly:
		return min(max(v.stampScore+1, stampScoreStart), stampScoreMax)
	case v.stampScore > 0:
		return v.stampScore - 1
	}
	return v.stampScore
}

// speculateEarly is the refresh of a view expected to move only its
// watermark (stagesEarly), on two goroutines. The staging's syncs are
// the longest step of such a refresh, so they start at once, on this
// goroutine; the rest of the refresh runs beside them on another. That
// one starts before the source's head is read, which it needs: a new
// goroutine can take a while to get a CPU (an idle vCPU wakes slowly),
// and this way the wait overlaps the read.
func (r *refreshRun) speculateEarly(ctx context.Context) (*Result, error) {
	type outcome struct {
		res *Result
		err error
	}
	h := newHandoff(r.v.wakeup.spin())
	done := make(chan outcome, 1)
	go func() {
		spec, head, woke := h.wait()
		r.v.wakeup.note(woke)
		if spec == nil {
			return // the refresh goes on without speculating
		}
		res, err := r.reconcile(ctx, head, spec)
		done <- outcome{res, err}
	}()
	spec, head := r.earlyHead(ctx)
	h.give(spec, head)
	if spec == nil {
		// Most often a no-op: the head read is the snapshot, not probed
		// for again.
		return r.reconcile(ctx, head, nil)
	}
	spec.stage(ctx, r.v.table, r.vm)
	out := <-done
	if spec.handedBack() && out.err == nil {
		return r.publishHandedBack(ctx, spec)
	}
	return out.res, out.err
}

// earlyHead prepares the speculation of a refresh that will most likely
// only move the watermark as soon as the source's newest version is
// known, before its manifest is decoded, the refresh's costliest read:
// the staging's syncs then overlap the decoding too. It returns the
// speculation, not started, and the head it stamps; no speculation when
// the source has not moved past the watermark (a no-op needs no stage),
// and nils when the head cannot be read (the snapshot's read reports
// the error). Called when stagesEarly; the snapshot checked out of the
// head is then the refresh's target.
func (r *refreshRun) earlyHead(ctx context.Context) (*speculation, *lance.Head) {
	v := r.v
	h, err := v.src.Head(ctx)
	if err != nil {
		return nil, nil
	}
	if h.Version <= r.wm.SourceVersion {
		return nil, h
	}
	r.prepare()
	sp := v.newSpeculation(v.stampOf(r.vm, h.Version, h.Timestamp.UnixNano()), r.prepared)
	sp.stager = true // staged by the refresh's first goroutine
	return sp, h
}

// stampOf is the watermark a refresh of the view at vm to source version
// (version, ts) commits: refreshed now, in the version after vm.
func (v *View) stampOf(vm *lance.Snapshot, version uint64, ts int64) Watermark {
	return Watermark{Valid: true, SourceVersion: version, SourceVersionTS: ts, RefreshedAtMs: v.db.now().UnixMilli(), ViewVersion: vm.Version + 1}
}

// speculate stages the watermark-only commit of stamp on vm, into the
// refresh's prepared staging file, when the view's last refresh committed
// its watermark alone, else returns nil. A commit that turns out to need
// rows makes its own staging file.
func (v *View) speculate(ctx context.Context, vm *lance.Snapshot, stamp Watermark, prepared *lance.Prepared) *speculation {
	if !v.speculates() {
		return nil
	}
	sp := v.newSpeculation(stamp, prepared)
	go sp.stage(ctx, v.table, vm)
	return sp
}

// discard drops the staged commit unless it was published (nil: none).
func (sp *speculation) discard() {
	if sp == nil {
		return
	}
	<-sp.done
	sp.sc.Discard()
}

// publishStampOnly ends an incremental refresh whose rows leave the view
// as it is, with a speculation (a.spec) staged: to version next, its index
// built cold or not. A speculation its refresh's first goroutine stages
// is handed back to it, which publishes it once staged (speculateEarly):
// on its own thread, rather than this one waiting for it and being woken.
func (a *attempt) publishStampOnly(ctx context.Context, next uint64, cold bool) (*Result, error) {
	res := &Result{Mode: ModeIncremental, SourceVersion: a.sm.Version, Version: next}
	if a.spec.stager {
		a.spec.back, a.spec.backCold = res, cold
		return res, nil
	}
	m, err := a.v.publishSpeculation(ctx, a.spec, a.vm)
	if err := a.committed(m, err, next, true, cold); err != nil {
		return nil, err
	}
	res.Version = m.Version
	return res, nil
}

// publishSpeculation publishes the staged watermark-only commit. A failed
// staging fails the refresh: a sync that failed is not retried.
func (v *View) publishSpeculation(ctx context.Context, sp *speculation, vm *lance.Snapshot) (*lance.Snapshot, error) {
	<-sp.done
	if sp.err != nil {
		return nil, v.commitError(sp.err, vm)
	}
	m, err := sp.sc.Publish(ctx)
	if err != nil {
		return nil, v.commitError(err, vm)
	}
	v.speculated++
	if sp.prebuilt {
		v.prebuilt++
	}
	return m, nil
}

// publishHandedBack publishes the speculation whose publish the refresh's
// other goroutine handed back, and completes the refresh as incremental
// does after its commit.
func (r *refreshRun) publishHandedBack(ctx context.Context, sp *speculation) (*Result, error) {
	m, err := r.v.publishSpeculation(ctx, sp, r.vm)
	if err := r.committed(m, err, sp.back.Version, true, sp.backCold); err != nil {
		return nil, err
	}
	res := *sp.back
	return &res, nil
}
