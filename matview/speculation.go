package matview

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/plan"
)

// A refresh that most likely moves only the view's watermark stages that
// commit while it finds out (speculation), on two goroutines (handoff);
// a saturating counter predicts such refreshes (stampScore).

// handoffSpin is how long the refresh's other goroutine polls for the
// head before it blocks. Blocked, it would leave its vCPU idle, to be
// woken as slowly as a new goroutine starts; the head is read in about
// 0.1 ms.
const handoffSpin = 300 * time.Microsecond

// handoff passes the source's head and the speculation staged on it (or
// nils) from a refresh's goroutine to its other one, once: give on one,
// wait on the other.
type handoff struct {
	spin  time.Duration
	ready atomic.Bool
	ch    chan struct{} // closed by give
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
	h.ready.Store(true)
	close(h.ch)
}

// wait returns what give handed over, polling for h.spin (yielding to
// any other goroutine) before it blocks.
func (h *handoff) wait() (*speculation, *lance.Head) {
	deadline := time.Now().Add(h.spin)
	for !h.ready.Load() {
		if time.Now().After(deadline) {
			<-h.ch
			break
		}
		runtime.Gosched()
	}
	return h.spec, h.head
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
func (v *View) newSpeculation(stamp Watermark) *speculation {
	return &speculation{
		stamp: stamp,
		// Published, it is a watermark-only refresh: the next refresh
		// speculates, on the commit built ahead after this one.
		c:    &lance.Commit{SchemaMetadata: stamp.stamp(), Rebase: lance.RebaseNever, Prepared: v.prepared, DeferHint: true, DeferSync: !v.db.strict, Next: stamp.nextStamp()},
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

// stagesEarly reports whether a refresh of the view stages its
// speculation as soon as the source's newest version is known (earlyHead):
// a plain refresh of an intact view expected to move only its watermark
// (speculates), with its source handle warm.
func (v *View) stagesEarly(def *plan.Definition, o RefreshOptions, wm Watermark, intact bool) bool {
	return v.speculates() && !o.Full && o.SourceVersion == nil && intact && v.src != nil && v.srcName == def.SourceTable
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

// earlyHead prepares the speculation of a refresh that will most likely
// only move the watermark as soon as the source's newest version is
// known, before its manifest is decoded, the refresh's costliest read:
// the staging's syncs then overlap the decoding too. It returns the
// speculation, not started, and the head it stamps; no speculation when
// the source has not moved past the watermark (a no-op needs no stage),
// and nils when the head cannot be read (the snapshot's read reports
// the error). Called when stagesEarly; the snapshot checked out of the
// head is then the refresh's target.
func (v *View) earlyHead(ctx context.Context, vm *lance.Snapshot, wm Watermark) (*speculation, *lance.Head) {
	h, err := v.src.Head(ctx)
	if err != nil {
		return nil, nil
	}
	if h.Version <= wm.SourceVersion {
		return nil, h
	}
	v.prepared = v.table.Prepare()
	sp := v.newSpeculation(v.stampOf(vm, h.Version, h.Timestamp.UnixNano()))
	sp.stager = true // staged by the refresh's first goroutine
	return sp, h
}

// stampOf is the watermark a refresh of the view at vm to source version
// (version, ts) commits: refreshed now, in the version after vm.
func (v *View) stampOf(vm *lance.Snapshot, version uint64, ts int64) Watermark {
	return Watermark{Valid: true, SourceVersion: version, SourceVersionTS: ts, RefreshedAtMs: v.db.now().UnixMilli(), ViewVersion: vm.Version + 1}
}

// speculate stages the watermark-only commit of stamp on vm when the
// view's last refresh committed its watermark alone, else returns nil. It
// takes the refresh's prepared staging file; a commit that turns out to
// need rows makes its own.
func (v *View) speculate(ctx context.Context, vm *lance.Snapshot, stamp Watermark) *speculation {
	if !v.speculates() {
		return nil
	}
	sp := v.newSpeculation(stamp)
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
func (v *View) publishHandedBack(ctx context.Context, sp *speculation, vm *lance.Snapshot) (*Result, error) {
	m, err := v.publishSpeculation(ctx, sp, vm)
	if err := v.committed(m, err, sp.back.Version, true, sp.backCold); err != nil {
		return nil, err
	}
	res := *sp.back
	return &res, nil
}
