package matview

import "fmt"

// The refresh's decision: from plain facts about the view, the source and
// the definition, whether the refresh is a no_op, a rebuild or
// incremental, over which span, and why. decide reads no file and starts
// no goroutine; the refresh (refreshRun) gathers the facts it asks for, in
// the order it asks, and carries the decision out. Every rule is here: a
// rule changes in this file, and decide_test.go's table says what each
// does.

// decisionInput is what a refresh's mode depends on.
type decisionInput struct {
	// full is RefreshOptions.Full: rebuild whatever the span.
	full bool
	// watermark is the view's, as its last refresh stamped it.
	watermark Watermark
	// intact says the view is as its last refresh left it (no commit on it
	// since but ones that kept its rows: a compaction, an index).
	intact bool
	// capped says the definition holds a row cap (LIMIT n).
	capped bool
	// target is the source version the refresh reflects (T): the pinned
	// RefreshOptions.SourceVersion, or the source's latest.
	target sourceVersion
	// atWatermark is the source version the watermark records (W), looked
	// up: nil until the decision asks for it (needWatermark).
	atWatermark *watermarkVersion
	// span is the source's history from W to T: nil until the decision
	// asks for it (needSpan).
	span *spanFacts
	// offered is the precomputed change set the caller offered
	// (RefreshOptions.Changes), nil when none.
	offered *versionRange
}

// sourceVersion is one version of the source: its number and its commit
// time (ns since the epoch), which tells two incarnations of a source
// apart.
type sourceVersion struct {
	version  uint64
	commitTS int64
}

// watermarkVersion is what the source holds at the watermark's version.
type watermarkVersion struct {
	// found is false when the version cannot be checked out (cleaned up,
	// or the source was recreated with fewer versions).
	found bool
	// commitTS is its commit time.
	commitTS int64
	// readColumns says how the columns the view reads changed from W to
	// T, in identity or type ("" when they did not).
	readColumns string
	// kept says, when the version is gone (found false), that the state
	// mvd kept of it (SourceStateStore) stands in for it: commitTS and
	// readColumns are then the kept state's, and its change set to T is
	// known. keptWhy says why no kept state does ("" when one does).
	kept    bool
	keptWhy string
}

// spanFacts is the source's history after W, one step per version, in
// order. A walk of the history may stop at the first step that decides a
// rebuild (stepRule): the steps after it do not matter.
type spanFacts struct {
	steps []spanStep
}

// spanStep is one version of the source's history.
type spanStep struct {
	version uint64
	// gone says the version cannot be read (cleaned up): what it did is
	// unknown.
	gone bool
	// op is the version's lance operation ("append", "delete", "update",
	// "overwrite", "restore", "merge", …).
	op string
	// readColumns says how the step changed the columns the view reads
	// from the version before ("" when it did not).
	readColumns string
}

// versionRange is a span of source versions, from one to another.
type versionRange struct{ from, to uint64 }

// need is the fact a decision asks for before it can decide.
type need int

const (
	needNothing   need = iota
	needWatermark      // the source at W (decisionInput.atWatermark)
	needSpan           // the history from W to T (decisionInput.span)
)

// decision is what a refresh does.
type decision struct {
	// mode is "" while the decision needs a fact (need).
	mode Mode
	need need
	// reason says why a rebuild ("" otherwise).
	reason string
	// span is an incremental refresh's change set, to be composed.
	span changeSpan
}

// changeSpan says how an incremental refresh gets its change set from W
// to T: the offered one as it is, or the composition of the change sets
// of segments, each a run of row-level steps (the column-only steps
// between them change no row the view reads).
type changeSpan struct {
	from, to uint64
	offered  bool
	// kept: the change set computed from the state kept of W, its
	// version being gone (watermarkVersion.kept).
	kept     bool
	segments []versionRange
}

// decide is the refresh's decision on in.
func decide(in *decisionInput) decision {
	T, W := in.target, in.watermark
	if !in.full && in.intact && W.SourceVersion == T.version && W.SourceVersionTS == T.commitTS {
		return decision{mode: ModeNoOp}
	}
	if reason := viewRule(in); reason != "" {
		return rebuildFor(reason)
	}
	at := in.atWatermark
	switch {
	case at == nil:
		return decision{need: needWatermark}
	case !at.found && !at.kept:
		return rebuildFor(fmt.Sprintf("source version %d was cleaned up and %s", W.SourceVersion, at.keptWhy))
	case at.commitTS != W.SourceVersionTS:
		return rebuildFor(fmt.Sprintf("source version %d is not the one the watermark recorded (its commit time differs): the source was dropped and recreated, or that version was lost in a crash", W.SourceVersion))
	case at.readColumns != "":
		return rebuildFor(at.readColumns)
	case !at.found:
		// The history after W went with it: the kept state's check
		// against T (lance.ChangesFromState: no fragment id reused, no
		// deletion undone, the table carried on) stands in for the step
		// rules, and the change set is the one computed from it.
		if in.capped {
			if reason := cappedRebuild(in); reason != "" {
				return rebuildFor(reason)
			}
		}
		return decision{mode: ModeIncremental, span: changeSpan{from: W.SourceVersion, to: T.version, kept: true}}
	case in.span == nil:
		return decision{need: needSpan}
	}
	cs := changeSpan{from: W.SourceVersion, to: T.version}
	start := cs.from
	for _, st := range in.span.steps {
		reason, cut := stepRule(st)
		if reason != "" {
			return rebuildFor(reason)
		}
		if cut {
			cs.segments = appendSegment(cs.segments, start, st.version-1)
			start = st.version
		}
	}
	if in.capped {
		if reason := cappedRebuild(in); reason != "" {
			return rebuildFor(reason)
		}
	}
	if o := in.offered; o != nil && o.from == cs.from && o.to == cs.to && start == cs.from {
		cs.offered = true
		return decision{mode: ModeIncremental, span: cs}
	}
	cs.segments = appendSegment(cs.segments, start, cs.to)
	return decision{mode: ModeIncremental, span: cs}
}

// viewRule is the reason a refresh rebuilds whatever the source did
// since W ("" when it may not need to).
func viewRule(in *decisionInput) string {
	switch W := in.watermark; {
	case in.full:
		return "full refresh requested"
	case !W.Valid:
		return "first refresh"
	case !in.intact:
		return "the view was changed outside its refreshes"
	case W.SourceVersion > in.target.version:
		return fmt.Sprintf("source version %d is older than the watermark %d", in.target.version, W.SourceVersion)
	}
	return ""
}

// stepRule says what one version of the source's history means to an
// incremental refresh: a reason to rebuild, or whether it cuts the
// change set in two (a column-only step: its rows' versions move, what
// the view reads does not).
func stepRule(st spanStep) (reason string, cut bool) {
	switch {
	case st.gone:
		return fmt.Sprintf("source version %d no longer exists", st.version), false
	case rowLevel(st.op):
		return "", false
	case columnOnly(st.op):
		return st.readColumns, st.readColumns == ""
	}
	return fmt.Sprintf("source version %d is a %s", st.version, st.op), false
}

// cappedRebuild is the rule for a view with a row cap (LIMIT n) over a
// span its other rules leave incremental: why it must be rebuilt before
// any row is read, "" when incremental.Step may try. mvd lets Step try
// every such span: it keeps the first n matching rows in scan order row
// by row where it can (evicting deleted and updated rows, refilling from
// the last kept row) and asks for a rebuild, with its reason, where a
// changed row sits before the last one kept (Output.Rebuild). LanceDB
// rebuilds a capped view on any delete or update in the span (in.span's
// steps say which ops).
func cappedRebuild(*decisionInput) string { return "" }

// rowLevel lists operations whose effect a change set describes exactly.
func rowLevel(op string) bool {
	switch op {
	case "append", "delete", "update", "rewrite", "reserve_fragments", "create_index", "update_config", "update_mem_wal_state":
		return true
	}
	return false
}

// columnOnly lists operations that change columns, not rows: harmless to
// a view when its read columns keep their field ids and types.
func columnOnly(op string) bool {
	switch op {
	case "merge", "project":
		return true
	}
	return false
}

// rebuildFor is the decision to rebuild, for reason.
func rebuildFor(reason string) decision { return decision{mode: ModeRebuild, reason: reason} }

// appendSegment appends the segment from..to unless it holds no step.
func appendSegment(segs []versionRange, from, to uint64) []versionRange {
	if to <= from {
		return segs
	}
	return append(segs, versionRange{from, to})
}
