package matview

import (
	"context"
	"errors"

	"github.com/mvd-project/mvd/internal/budget"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/plan"
)

// refreshRun is one refresh of a view: it gathers the facts the decision
// (decide) asks for and carries the decision out. It owns what lives for
// one refresh only — the view commit's staging file, the speculation and
// the source head read ahead (speculation.go) — so that the View keeps
// only what carries over from one refresh to the next.
type refreshRun struct {
	v      *View
	o      RefreshOptions
	vm     *lance.Snapshot // the view as the refresh found it
	def    *plan.Definition
	wm     Watermark
	intact bool
	// prepared is the view commit's staging file, made once the refresh
	// is known to commit (nil until then); end releases it.
	prepared *lance.Prepared
	// warnings are the refresh's (Result.Warnings).
	warnings []string
	// reflected is the source version the view reflects after a
	// successful refresh (its state is kept: keepSourceState).
	reflected *lance.Snapshot
}

// newRun starts a refresh of the view with options o: it reads the
// view's latest version, its definition and watermark.
func (v *View) newRun(ctx context.Context, o RefreshOptions) (*refreshRun, error) {
	vm, def, err := v.current(ctx)
	if err != nil {
		return nil, err
	}
	if len(def.SourceNamespace) > 0 {
		return nil, errorf(ErrUnsupported, nil, "view '%s' reads '%s' in namespace %v; mvd refreshes views over root-namespace tables only", v.name, def.SourceTable, def.SourceNamespace)
	}
	wm := watermarkOf(vm.Schema.Metadata)
	return &refreshRun{v: v, o: o, vm: vm, def: def, wm: wm, intact: wm.Valid && v.intact(ctx, wm, vm)}, nil
}

// end releases what the refresh left unused.
func (r *refreshRun) end() {
	r.prepared.Release() // nil: none was made
	r.prepared = nil
}

// prepare makes the view commit's staging file, once.
func (r *refreshRun) prepare() {
	if r.prepared == nil {
		r.prepared = r.v.table.Prepare()
	}
}

// attempt is one pass of a refresh from the source's snapshot on; a
// refresh whose head read ahead turns out stale starts a second one.
type attempt struct {
	*refreshRun
	// head is the source's head read ahead (earlyHead) until checked
	// (checkHead); spec the speculation staged on it or since (nil: none).
	head *lance.Head
	spec *speculation
	src  *lance.Table
	sm   *lance.Snapshot // the source at the target version
	wmM  *lance.Snapshot // the source at the watermark's version
	// keptCS is the change set from the state kept of the watermark's
	// version, when that version is gone (keptFacts).
	keptCS *lance.ChangeSet
	p      *plan.Plan
	// stamp is the watermark the refresh commits.
	stamp Watermark
}

// reconcile is the refresh from the source's snapshot on: head is the
// source's head read ahead or nil, spec the speculation staged on it or
// nil.
func (r *refreshRun) reconcile(ctx context.Context, head *lance.Head, spec *speculation) (*Result, error) {
	a := &attempt{refreshRun: r, head: head, spec: spec}
	// A speculation is discarded unless published.
	defer func() {
		if !a.spec.handedBack() {
			a.spec.discard()
		}
	}()
	if err := a.target(ctx); err != nil {
		return nil, err
	}
	in := a.input()
	d := decide(&in)
	if d.mode != ModeNoOp {
		a.commits()
	}
	for d.mode == "" {
		if err := a.gather(ctx, d.need, &in); err != nil {
			return nil, err
		}
		d = decide(&in)
	}
	res, err := a.act(ctx, d)
	if err == nil && res != nil && res.SourceVersion == a.sm.Version {
		r.reflected = a.sm
	}
	return res, err
}

// target reads the source at the version to reflect and plans the
// definition on it.
func (a *attempt) target(ctx context.Context) error {
	var err error
	if a.src, a.sm, err = a.v.sourceSnapshot(ctx, a.def, a.o, a.head); err != nil {
		return err
	}
	if !a.sm.StableRowIDs() {
		return errorf(ErrInvalid, nil, "source table '%s' does not have stable row ids; it is not the table this view was declared over", a.def.SourceTable)
	}
	a.p, err = a.v.planFor(a.def, a.vm, a.sm)
	return err
}

// input is the decision's input as far as known before the source's
// history is read.
func (a *attempt) input() decisionInput {
	_, capped := a.p.Limit()
	in := decisionInput{
		full:      a.o.Full,
		watermark: a.wm,
		intact:    a.intact,
		capped:    capped,
		target:    sourceVersion{version: a.sm.Version, commitTS: a.sm.Timestamp.UnixNano()},
	}
	if c := a.o.Changes; c != nil {
		in.offered = &versionRange{c.From, c.To}
	}
	return in
}

// commits readies the commit of a refresh that is not a no_op: its
// staging file is made while the changes are read and the rows written,
// and a speculation staged for another head than the snapshot's is
// dropped.
func (a *attempt) commits() {
	a.prepare()
	a.stamp = a.v.stampOf(a.vm, a.sm.Version, a.sm.Timestamp.UnixNano())
	if a.spec != nil && !a.spec.stamps(a.stamp) {
		a.spec.discard()
		a.spec = nil
	}
}

// gather finds the fact the decision needs into in.
func (a *attempt) gather(ctx context.Context, n need, in *decisionInput) error {
	switch n {
	case needWatermark:
		in.atWatermark, a.wmM = watermarkFacts(ctx, a.src, a.wm.SourceVersion, a.sm, a.p.Columns())
		if !in.atWatermark.found {
			in.atWatermark, a.keptCS = a.keptFacts(ctx)
		}
	case needSpan:
		// The refresh is incremental unless the history says otherwise:
		// a speculation's syncs overlap reading it.
		if a.spec == nil {
			a.spec = a.v.speculate(ctx, a.vm, a.stamp, a.prepared)
		}
		sf, err := walkSpan(ctx, a.wmM, a.sm, a.p.Columns())
		if err != nil {
			return a.changesError(err)
		}
		in.span = sf
	default:
		return errorf(ErrInvalid, nil, "refresh view '%s': the decision asked for fact %d", a.v.name, n)
	}
	return nil
}

// changesError is the error of a failed read of the source's changes.
func (a *attempt) changesError(err error) error {
	return errorf(ErrInvalid, err, "refresh view '%s': changes of '%s' from version %d to %d: %v", a.v.name, a.def.SourceTable, a.wm.SourceVersion, a.sm.Version, err)
}

// act carries decision d out. The result carries the commit time of
// the source version it reflects.
func (a *attempt) act(ctx context.Context, d decision) (*Result, error) {
	res, err := a.actMode(ctx, d)
	if res != nil && !a.sm.Timestamp.IsZero() {
		res.SourceCommittedAt = a.sm.Timestamp
	}
	return res, err
}

// actMode is act, by d's mode.
func (a *attempt) actMode(ctx context.Context, d decision) (*Result, error) {
	switch d.mode {
	case ModeNoOp:
		if err := a.checkHead(ctx); err != nil {
			return nil, err
		}
		return &Result{Mode: ModeNoOp, SourceVersion: a.sm.Version, Version: a.vm.Version}, nil
	case ModeRebuild:
		if err := a.checkHead(ctx); err != nil {
			return nil, err
		}
		return a.rebuildFor(ctx, d.reason)
	}
	cs := a.keptCS
	if !d.span.kept {
		var err error
		if cs, err = changesOf(ctx, d.span, a.wmM, a.sm, a.o.Changes); err != nil {
			return nil, a.changesError(err)
		}
	}
	return a.incremental(ctx, cs)
}

// rebuildFor rebuilds the view, for reason.
func (a *attempt) rebuildFor(ctx context.Context, reason string) (*Result, error) {
	a.v.stampScore = 0
	res, err := a.rebuild(ctx)
	if res != nil {
		res.Reason = reason
	}
	return res, err
}

// checkHead checks a snapshot decoded from the head read ahead for a
// newer version past a gap (a read of the version hint), once, just
// before the refresh acts on it: a speculating refresh does it while its
// staging syncs. A stale head fails with lance.ErrStaleHead before
// anything is committed.
func (a *attempt) checkHead(ctx context.Context) error {
	if a.head == nil || a.sm.Version != a.head.Version {
		return nil
	}
	h := a.head
	a.head = nil
	return a.src.CheckHead(ctx, h)
}

// refresh is Refresh with v.mu held.
func (v *View) refresh(ctx context.Context, o RefreshOptions) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := v.newRun(ctx, o)
	if err != nil {
		return nil, err
	}
	defer r.end()
	ctx, lim, err := r.budget(ctx)
	if err != nil {
		return nil, err
	}
	if lim != nil {
		defer func() { v.budgetPeak = lim.Peak() }()
	}
	var res *Result
	if r.stagesEarly() && budget.From(ctx) == nil { // two goroutines: not under a CPU budget
		res, err = r.speculateEarly(ctx)
	} else {
		res, err = r.reconcile(ctx, nil, nil)
	}
	if errors.Is(err, lance.ErrStaleHead) {
		// A newer version exists past a gap in the source's history: the
		// head was not the latest. Nothing was committed; the refresh
		// starts over from the latest version, found by a listing.
		res, err = r.reconcile(ctx, nil, nil)
	}
	if res != nil && len(r.warnings) > 0 {
		res.Warnings = append(res.Warnings, r.warnings...)
	}
	if err == nil && r.reflected != nil {
		v.keepSourceState(r.def.SourceTable, r.reflected)
	}
	return res, err
}
