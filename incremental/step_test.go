package incremental

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/lance"
)

// TestDecideCapped: the rules of a capped view's step, from its facts.
func TestDecideCapped(t *testing.T) {
	at := func(frag int) *position { return &position{frag: frag, off: 7} }
	cases := []struct {
		name string
		f    capFacts
		want capRules
	}{
		{"limit 0 holds nothing", capFacts{limit: 0}, capRules{}},
		{"full, nothing evicted: no room", capFacts{limit: 4, held: 4, last: at(2)}, capRules{}},
		{"full, two evicted: refill by scan from the last kept row's fragment", capFacts{limit: 4, held: 4, evicted: 2, last: at(2)}, capRules{room: 2, refill: refillScan, from: 2}},
		{"full, all evicted: refill by scan from the start", capFacts{limit: 4, held: 4, evicted: 4}, capRules{room: 4, refill: refillScan}},
		{"below the cap: only changed rows can come in", capFacts{limit: 4, held: 3, evicted: 1, last: at(0)}, capRules{room: 2, refill: refillChanged}},
		{"below the cap, nothing evicted: room for appends", capFacts{limit: 4, held: 3, last: at(5)}, capRules{room: 1, refill: refillChanged}},
		{"empty view", capFacts{limit: 4}, capRules{room: 4, refill: refillChanged}},
		{"more evicted than held counts as all", capFacts{limit: 4, held: 4, evicted: 9}, capRules{room: 4, refill: refillScan}},
		{"held over the cap: no room", capFacts{limit: 2, held: 4, evicted: 1, last: at(1)}, capRules{}},
	}
	for _, c := range cases {
		if got := decideCapped(c.f); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	// Where the kept rows are no longer the first ones, or cannot be
	// placed, the step rebuilds, saying why.
	for name, f := range map[string]capFacts{
		"changed row before the last kept": {limit: 4, held: 4, evicted: 1, last: at(1), changedBefore: true},
		"kept rows lost":                   {limit: 4, held: 4, lost: 1, last: at(1)},
	} {
		if r := decideCapped(f); r.rebuild == "" || r.room != 0 || r.refill != refillNone {
			t.Errorf("%s: %+v, want a rebuild", name, r)
		}
	}
}

// TestDecidePlain: an uncapped view reads every inserted and updated row,
// compares the held updated ones, and sizes Added up front only when every
// row read goes in.
func TestDecidePlain(t *testing.T) {
	cs := func(ins, upd, del []uint64) *lance.ChangeSet {
		return &lance.ChangeSet{Inserted: roaring64.BitmapOf(ins...), Updated: roaring64.BitmapOf(upd...), Deleted: roaring64.BitmapOf(del...)}
	}
	cases := []struct {
		name          string
		cs            *lance.ChangeSet
		held          []uint64 // held rows among the deleted and updated
		filtered      bool
		read, compare []uint64
		presize       bool
	}{
		{"append", cs([]uint64{7, 8}, nil, nil), nil, false, []uint64{7, 8}, nil, true},
		{"filtered append", cs([]uint64{7, 8}, nil, nil), nil, true, []uint64{7, 8}, nil, false},
		{"delete", cs(nil, nil, []uint64{1, 2}), []uint64{1}, false, nil, nil, true},
		{"update of held and unheld rows", cs(nil, []uint64{1, 2, 3}, nil), []uint64{1, 3}, false, []uint64{1, 2, 3}, []uint64{1, 3}, false},
		{"all three", cs([]uint64{9}, []uint64{2}, []uint64{1}), []uint64{1, 2}, true, []uint64{2, 9}, []uint64{2}, false},
	}
	for _, c := range cases {
		r := decidePlain(c.cs, roaring64.BitmapOf(c.held...), c.filtered)
		if !slices.Equal(r.read.ToArray(), c.read) && !(r.read.IsEmpty() && c.read == nil) {
			t.Errorf("%s: read %v, want %v", c.name, r.read.ToArray(), c.read)
		}
		if !slices.Equal(r.compare.ToArray(), c.compare) && !(r.compare.IsEmpty() && c.compare == nil) {
			t.Errorf("%s: compare %v, want %v", c.name, r.compare.ToArray(), c.compare)
		}
		if r.presize != c.presize {
			t.Errorf("%s: presize %v", c.name, r.presize)
		}
	}
}

// TestCappedStepAppendsDeletes: a capped view through appends and deletes
// around its cap holds, after every step, the first rows in scan order (a
// rebuild's), with the refill counted and nothing rebuilt.
func TestCappedStepAppendsDeletes(t *testing.T) {
	src := newGoSource(t, t.TempDir(), 30)
	f := newFixture(t, src, "id, amount", "amount % 2 = 0", limit(4)) // ids 0, 2, 4, 6
	f.check("create")
	type want struct{ added, evicted, refilled int }
	steps := []struct {
		name string
		do   func()
		want want
	}{
		{"append past the cap", func() { appendRows(t, src, 30, 40) }, want{0, 0, 0}},
		{"delete a held row", func() { deleteIDs(t, src, 2) }, want{1, 1, 1}},
		{"delete an unheld row", func() { deleteIDs(t, src, 1, 13) }, want{0, 0, 0}},
		{"delete every even row of the first fragment", func() {
			var ids []uint64
			for i := uint64(0); i < 30; i += 2 {
				if i != 2 {
					ids = append(ids, i)
				}
			}
			deleteIDs(t, src, ids...)
		}, want{4, 4, 4}},
		{"delete the rest of the matching rows", func() { deleteIDs(t, src, 30, 32, 34, 36, 38) }, want{0, 4, 0}},
		{"append below the cap", func() { appendRows(t, src, 40, 46) }, want{3, 0, 0}},
		{"append and delete in one span", func() { appendRows(t, src, 46, 50); deleteIDs(t, src, 42) }, want{2, 1, 0}},
	}
	for _, s := range steps {
		s.do()
		out := f.step()
		if out.Rebuild != "" {
			t.Fatalf("%s: rebuild: %s", s.name, out.Rebuild)
		}
		got := want{len(out.Added), int(out.Evict.GetCardinality()), int(out.Refilled)}
		if got != s.want {
			t.Errorf("%s: added, evicted, refilled = %+v, want %+v", s.name, got, s.want)
		}
		f.check(s.name)
	}
}

// TestPlainStepAppendsDeletes: an uncapped view through appends and
// deletes holds a rebuild's rows after every step.
func TestPlainStepAppendsDeletes(t *testing.T) {
	src := newGoSource(t, t.TempDir(), 20)
	for _, where := range []string{"", "amount > 4"} {
		f := newFixture(t, src, "id, amount * 2 AS twice", where, nil)
		appendRows(t, src, 20, 30)
		deleteIDs(t, src, 3, 7, 25)
		out := f.step()
		if out.Rebuild != "" || out.Unchanged != 0 || out.Refilled != 0 {
			t.Fatalf("where %q: %+v", where, out)
		}
		f.check("where " + where)
		src = newGoSource(t, t.TempDir(), 20)
	}
}

// TestCappedStepLostRow: a change set that misses the deletion of a held
// row (the kept rows cannot all be placed) makes the step ask for a
// rebuild, sending nothing.
func TestCappedStepLostRow(t *testing.T) {
	src := newGoSource(t, t.TempDir(), 10)
	f := newFixture(t, src, "id", "", limit(3))
	deleteIDs(t, src, 1)
	to := latest(t, src)
	cs, err := lance.Changes(context.Background(), f.at, to)
	if err != nil {
		t.Fatal(err)
	}
	cs.Deleted.Remove(1)
	out, err := Step(context.Background(), Input{At: to, Changes: cs, Plan: f.plan, ViewAt: latest(t, f.view), Index: f.index}, nil)
	if err != nil || !strings.Contains(out.Rebuild, "no longer in the source") || out.Added != nil {
		t.Fatalf("%+v, %v", out, err)
	}
}

// TestChangedBefore: a changed row is found before a position and not at
// or after it, across fragments, from row metadata.
func TestChangedBefore(t *testing.T) {
	src := newGoSource(t, t.TempDir(), 10) // fragment 0: rows 0..9
	appendRows(t, src, 10, 20)             // fragment 1: rows 10..19
	at := latest(t, src)
	ctx := context.Background()
	cases := []struct {
		changed []uint64
		p       position
		want    bool
	}{
		{nil, position{1, 5}, false},
		{[]uint64{3}, position{1, 5}, true},
		{[]uint64{14}, position{1, 5}, true},
		{[]uint64{15}, position{1, 5}, false}, // the position itself
		{[]uint64{16, 19}, position{1, 5}, false},
		{[]uint64{9}, position{0, 9}, false},
		{[]uint64{8}, position{0, 9}, true},
	}
	for _, c := range cases {
		got, err := changedBefore(ctx, at, roaring64.BitmapOf(c.changed...), c.p)
		if err != nil || got != c.want {
			t.Errorf("changed %v before %+v: %v, %v; want %v", c.changed, c.p, got, err, c.want)
		}
		// More changed rows than rows before p: the row ids before p are
		// looked at instead of locating the changed rows.
		many := roaring64.BitmapOf(c.changed...)
		many.AddRange(1000, 1100) // not live: found nowhere
		got, err = changedBefore(ctx, at, many, c.p)
		if err != nil || got != c.want {
			t.Errorf("changed %v and 100 more before %+v: %v, %v; want %v", c.changed, c.p, got, err, c.want)
		}
	}
	deleteIDs(t, src, 3)
	got, err := changedBefore(ctx, latest(t, src), roaring64.BitmapOf(3), position{1, 0})
	if err != nil || got {
		t.Errorf("a deleted row counted as changed: %v, %v", got, err)
	}
	kept := roaring64.BitmapOf(2, 12)
	f, err := capFactsAt(ctx, at, kept, roaring64.BitmapOf(11))
	if err != nil || f.last == nil || *f.last != (position{1, 2}) || !f.changedBefore || f.lost != 0 {
		t.Errorf("facts %+v (last %v), %v", f, f.last, err)
	}
}
