package matview

import (
	"reflect"
	"strings"
	"testing"
)

// decideBase is a view stamped at source version 5 (commit time 500),
// intact, refreshed to version 8 of the same source, whose history after
// 5 is a delete, an append and an update.
func decideBase() decisionInput {
	return decisionInput{
		watermark: Watermark{Valid: true, SourceVersion: 5, SourceVersionTS: 500, ViewVersion: 3},
		intact:    true,
		target:    sourceVersion{version: 8, commitTS: 800},
		atWatermark: &watermarkVersion{
			found: true, commitTS: 500,
		},
		span: &spanFacts{steps: []spanStep{{version: 6, op: "delete"}, {version: 7, op: "append"}, {version: 8, op: "update"}}},
	}
}

// steps is a history after version 5, one op per version.
func steps(ops ...string) *spanFacts {
	sf := &spanFacts{}
	for i, op := range ops {
		sf.steps = append(sf.steps, spanStep{version: uint64(6 + i), op: op})
	}
	return sf
}

// TestDecide is every rule of the refresh's decision, one row each, with
// what LanceDB 0.39 decides where mvd differs (lancedb; docs: the
// LanceDB semantics, §4.2–4.10).
func TestDecide(t *testing.T) {
	whole := changeSpan{from: 5, to: 8, segments: []versionRange{{5, 8}}}
	for _, c := range []struct {
		name    string
		edit    func(in *decisionInput)
		mode    Mode
		need    need   // when mode is ""
		reason  string // a rebuild's, in part
		span    *changeSpan
		lancedb string // LanceDB's mode where it differs
	}{
		// no_op
		{name: "no-op: the watermark is the target", edit: func(in *decisionInput) { in.target = sourceVersion{5, 500} }, mode: ModeNoOp},
		{name: "no-op: pinned to the watermark's version", edit: func(in *decisionInput) { in.target = sourceVersion{5, 500}; in.atWatermark, in.span = nil, nil }, mode: ModeNoOp},
		{name: "no-op needs no fact of the history", edit: func(in *decisionInput) { in.target = sourceVersion{5, 500}; in.atWatermark = nil }, mode: ModeNoOp},

		// the view and the options
		{name: "full", edit: func(in *decisionInput) { in.full = true }, mode: ModeRebuild, reason: "full refresh requested"},
		{name: "full at the watermark", edit: func(in *decisionInput) { in.full = true; in.target = sourceVersion{5, 500} }, mode: ModeRebuild, reason: "full refresh requested"},
		{name: "full and pinned older", edit: func(in *decisionInput) { in.full = true; in.target = sourceVersion{2, 200} }, mode: ModeRebuild, reason: "full refresh requested"},
		{name: "first refresh", edit: func(in *decisionInput) { in.watermark, in.intact = Watermark{}, false }, mode: ModeRebuild, reason: "first refresh"},
		{name: "first refresh of an empty source at version 1", edit: func(in *decisionInput) {
			in.watermark, in.intact, in.target = Watermark{}, false, sourceVersion{1, 100}
		}, mode: ModeRebuild, reason: "first refresh"},
		{name: "view changed outside its refreshes (drift)", edit: func(in *decisionInput) { in.intact = false }, mode: ModeRebuild, reason: "changed outside its refreshes"},
		{name: "drift at the watermark's version", edit: func(in *decisionInput) { in.intact = false; in.target = sourceVersion{5, 500} }, mode: ModeRebuild, reason: "changed outside its refreshes"},
		{name: "pinned older than the watermark", edit: func(in *decisionInput) { in.target = sourceVersion{3, 300} }, mode: ModeRebuild, reason: "source version 3 is older than the watermark 5"},
		{name: "pinned newer than the watermark", edit: func(in *decisionInput) {}, mode: ModeIncremental, span: &whole},

		// the source at the watermark's version
		{name: "the watermark's version is asked for", edit: func(in *decisionInput) { in.atWatermark, in.span = nil, nil }, need: needWatermark},
		{name: "watermark version gone (cleaned up), no state kept", edit: func(in *decisionInput) {
			in.atWatermark = &watermarkVersion{keptWhy: "no state of it was kept"}
		}, mode: ModeRebuild, reason: "source version 5 was cleaned up and no state of it was kept"},
		{name: "watermark version gone, the state kept does not stand in", edit: func(in *decisionInput) {
			in.atWatermark = &watermarkVersion{keptWhy: "the state kept is of source version 4"}
		}, mode: ModeRebuild, reason: "source version 5 was cleaned up and the state kept is of source version 4"},
		{name: "watermark version gone, its kept state stands in: incremental from it, the history unread", edit: func(in *decisionInput) {
			in.atWatermark, in.span = &watermarkVersion{kept: true, commitTS: 500}, nil
		}, mode: ModeIncremental, span: &changeSpan{from: 5, to: 8, kept: true}, lancedb: "rebuild (the watermark version is gone)"},
		{name: "watermark version gone, kept state, an offered change set is not taken", edit: func(in *decisionInput) {
			in.atWatermark, in.span, in.offered = &watermarkVersion{kept: true, commitTS: 500}, nil, &versionRange{5, 8}
		}, mode: ModeIncremental, span: &changeSpan{from: 5, to: 8, kept: true}},
		{name: "watermark version gone, kept state, a read column's type changed", edit: func(in *decisionInput) {
			in.atWatermark = &watermarkVersion{kept: true, commitTS: 500, readColumns: "the type of source column 'amount' changed"}
		}, mode: ModeRebuild, reason: "the type of source column 'amount' changed"},
		{name: "watermark version gone, kept state of another incarnation", edit: func(in *decisionInput) {
			in.atWatermark = &watermarkVersion{kept: true, commitTS: 501}
		}, mode: ModeRebuild, reason: "dropped and recreated"},
		{name: "watermark version gone, kept state, capped view", edit: func(in *decisionInput) {
			in.atWatermark, in.capped = &watermarkVersion{kept: true, commitTS: 500}, true
		}, mode: ModeIncremental, span: &changeSpan{from: 5, to: 8, kept: true}},
		{name: "source recreated: its commit time differs", edit: func(in *decisionInput) { in.atWatermark.commitTS = 501 }, mode: ModeRebuild, reason: "dropped and recreated"},
		{name: "source recreated at the watermark's very version", edit: func(in *decisionInput) {
			in.target = sourceVersion{5, 900}
			in.atWatermark.commitTS = 900
		}, mode: ModeRebuild, reason: "dropped and recreated"},
		{name: "read column's type changed from W to T", edit: func(in *decisionInput) {
			in.atWatermark.readColumns = "the type of source column 'amount' changed"
		}, mode: ModeRebuild, reason: "the type of source column 'amount' changed"},
		{name: "the history is asked for", edit: func(in *decisionInput) { in.span = nil }, need: needSpan},

		// the history from W to T
		{name: "overwrite in the span", edit: func(in *decisionInput) { in.span = steps("append", "overwrite", "delete") }, mode: ModeRebuild, reason: "source version 7 is a overwrite"},
		{name: "restore in the span", edit: func(in *decisionInput) { in.span = steps("restore", "append", "append") }, mode: ModeRebuild, reason: "source version 6 is a restore"},
		{name: "an operation mvd does not know", edit: func(in *decisionInput) { in.span = steps("append", "append", "data_replacement") }, mode: ModeRebuild, reason: "source version 8 is a data_replacement"},
		{name: "a version of the span gone", edit: func(in *decisionInput) {
			in.span = &spanFacts{steps: []spanStep{{version: 6, op: "append"}, {version: 7, gone: true}}}
		}, mode: ModeRebuild, reason: "source version 7 no longer exists"},
		{name: "row-level operations", edit: func(in *decisionInput) {
			in.span = steps("rewrite", "create_index", "reserve_fragments")
		}, mode: ModeIncremental, span: &whole, lancedb: "rebuild (create_index sends LanceDB to its fragment signature check, which a compaction fails)"},
		{name: "metadata and mem-WAL steps", edit: func(in *decisionInput) {
			in.span = steps("update_config", "update_mem_wal_state", "append")
		}, mode: ModeIncremental, span: &whole},
		{name: "a column added between row-level steps cuts the change set", edit: func(in *decisionInput) {
			in.span = steps("append", "merge", "delete")
		}, mode: ModeIncremental, span: &changeSpan{from: 5, to: 8, segments: []versionRange{{5, 6}, {7, 8}}}, lancedb: "rebuild (an added column and a delete)"},
		{name: "an unread column dropped last", edit: func(in *decisionInput) {
			in.span = steps("append", "delete", "project")
		}, mode: ModeIncremental, span: &changeSpan{from: 5, to: 8, segments: []versionRange{{5, 7}}}},
		{name: "a column-only step first", edit: func(in *decisionInput) {
			in.span = steps("merge", "append", "append")
		}, mode: ModeIncremental, span: &changeSpan{from: 5, to: 8, segments: []versionRange{{6, 8}}}},
		{name: "column-only steps alone", edit: func(in *decisionInput) {
			in.span = steps("merge", "project", "merge")
		}, mode: ModeIncremental, span: &changeSpan{from: 5, to: 8}},
		{name: "a column-only step that changed a read column", edit: func(in *decisionInput) {
			in.span = steps("append", "project", "append")
			in.span.steps[1].readColumns = "source column 'kind' is not in both versions"
		}, mode: ModeRebuild, reason: "source column 'kind' is not in both versions"},
		{name: "a read column changed by a row-level step is the W-to-T check's", edit: func(in *decisionInput) {
			in.span.steps[2].readColumns = "the type of source column 'amount' changed"
		}, mode: ModeIncremental, span: &whole},

		// the change set offered
		{name: "offered change set over the span", edit: func(in *decisionInput) { in.offered = &versionRange{5, 8} }, mode: ModeIncremental, span: &changeSpan{from: 5, to: 8, offered: true}},
		{name: "offered change set from another version", edit: func(in *decisionInput) { in.offered = &versionRange{4, 8} }, mode: ModeIncremental, span: &whole},
		{name: "offered change set to another version", edit: func(in *decisionInput) { in.offered = &versionRange{5, 7} }, mode: ModeIncremental, span: &whole},
		{name: "offered change set over a column-only step", edit: func(in *decisionInput) {
			in.offered = &versionRange{5, 8}
			in.span = steps("append", "merge", "delete")
		}, mode: ModeIncremental, span: &changeSpan{from: 5, to: 8, segments: []versionRange{{5, 6}, {7, 8}}}},
		{name: "offered change set, but the span must rebuild", edit: func(in *decisionInput) {
			in.offered = &versionRange{5, 8}
			in.span = steps("overwrite")
		}, mode: ModeRebuild, reason: "source version 6 is a overwrite"},

		// definitions
		{name: "capped view: deletes and updates (incremental.Step may still ask for a rebuild)", edit: func(in *decisionInput) { in.capped = true }, mode: ModeIncremental, span: &whole, lancedb: "rebuild (a capped view on any delete or update)"},
		{name: "capped view: appends", edit: func(in *decisionInput) { in.capped = true; in.span = steps("append", "append", "append") }, mode: ModeIncremental, span: &whole},
		{name: "capped view: an overwrite", edit: func(in *decisionInput) { in.capped = true; in.span = steps("overwrite") }, mode: ModeRebuild, reason: "is a overwrite"},
		{name: "view over a view: the upstream rebuilt (an update of every row) and stamped", edit: func(in *decisionInput) {
			in.span = steps("update", "update_config", "update")
		}, mode: ModeIncremental, span: &whole, lancedb: "rebuild (any upstream eviction or recompute)"},
		{name: "view over a view: the upstream's watermark-only refreshes", edit: func(in *decisionInput) {
			in.span = steps("update_config", "update_config", "update_config")
		}, mode: ModeIncremental, span: &whole},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := decideBase()
			c.edit(&in)
			d := decide(&in)
			if d.mode != c.mode || d.need != c.need {
				t.Fatalf("decided %q (need %d, reason %q), want %q (need %d)", d.mode, d.need, d.reason, c.mode, c.need)
			}
			if (d.mode == ModeRebuild) != (d.reason != "") || !strings.Contains(d.reason, c.reason) {
				t.Fatalf("reason %q, want one containing %q (and a reason for a rebuild only)", d.reason, c.reason)
			}
			if c.span != nil && !reflect.DeepEqual(d.span, *c.span) {
				t.Fatalf("span %+v, want %+v", d.span, *c.span)
			}
		})
	}
}

// TestDecideAsksInOrder: from the facts known before the source's history
// is read, the decision asks for the watermark's version, then the span,
// and never again for a fact it was given; given all, it decides what it
// decides with them at once.
func TestDecideAsksInOrder(t *testing.T) {
	full := decideBase()
	in := full
	in.atWatermark, in.span = nil, nil
	var asked []need
	d := decide(&in)
	for d.mode == "" {
		asked = append(asked, d.need)
		if len(asked) > 2 {
			t.Fatalf("asked %v", asked)
		}
		switch d.need {
		case needWatermark:
			in.atWatermark = full.atWatermark
		case needSpan:
			in.span = full.span
		}
		d = decide(&in)
	}
	if !reflect.DeepEqual(asked, []need{needWatermark, needSpan}) {
		t.Fatalf("asked %v, want the watermark's version, then the span", asked)
	}
	if want := decide(&full); !reflect.DeepEqual(d, want) {
		t.Fatalf("decided %+v step by step, %+v at once", d, want)
	}
}

// TestStepRuleStopsTheWalk: the walk of the history (walkSpan) stops at
// the first step stepRule rebuilds for; decide gives the same reason.
func TestStepRuleStopsTheWalk(t *testing.T) {
	for _, st := range []spanStep{{version: 6, gone: true}, {version: 6, op: "overwrite"}, {version: 6, op: "merge", readColumns: "x"}} {
		reason, cut := stepRule(st)
		if reason == "" || cut {
			t.Errorf("%+v: reason %q, cut %v; want a rebuild", st, reason, cut)
		}
		in := decideBase()
		in.span = &spanFacts{steps: []spanStep{st}}
		if d := decide(&in); d.mode != ModeRebuild || d.reason != reason {
			t.Errorf("%+v: decided %+v, want rebuild for %q", st, d, reason)
		}
	}
	if reason, cut := stepRule(spanStep{version: 6, op: "merge"}); reason != "" || !cut {
		t.Errorf("an added column: reason %q, cut %v; want a cut", reason, cut)
	}
}
