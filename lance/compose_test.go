package lance

import (
	"fmt"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

// Row states at a version: not yet live, live, gone (row ids are never
// reused, so a row goes through them in this order only).
const (
	notYet = iota
	live
	gone
)

// rowClass is what a change set says of one row over a span: "" (nothing),
// "I", "U" or "D".
func rowClass(from, to int, updated bool) string {
	switch {
	case from == notYet && to == live:
		return "I"
	case from == live && to == live && updated:
		return "U"
	case from == live && to == gone:
		return "D"
	}
	return ""
}

// history is one row's states at versions 0..n and whether each span
// updated it (only a live→live span can).
type history struct {
	states  []int
	updated []bool
}

// histories lists every valid history of one row over spans spans.
func histories(spans int) []history {
	var out []history
	var walk func(h history)
	walk = func(h history) {
		if len(h.states) == spans+1 {
			out = append(out, h)
			return
		}
		last := h.states[len(h.states)-1]
		for s := last; s <= gone; s++ {
			for _, u := range []bool{false, true} {
				if u && !(last == live && s == live) {
					continue
				}
				walk(history{append(append([]int(nil), h.states...), s), append(append([]bool(nil), h.updated...), u)})
			}
		}
	}
	for s := notYet; s <= gone; s++ {
		walk(history{states: []int{s}})
	}
	return out
}

// spanSets builds the change set of span i (versions i to i+1) of hs, row
// id = index in hs.
func spanSets(hs []history, i int) *ChangeSet {
	cs := &ChangeSet{From: uint64(i), To: uint64(i + 1), Inserted: roaring64.New(), Updated: roaring64.New(), Deleted: roaring64.New()}
	for id, h := range hs {
		switch rowClass(h.states[i], h.states[i+1], h.updated[i]) {
		case "I":
			cs.Inserted.Add(uint64(id))
		case "U":
			cs.Updated.Add(uint64(id))
		case "D":
			cs.Deleted.Add(uint64(id))
		}
	}
	return cs
}

// checkRows compares cs with what each history says of the whole span.
func checkRows(t *testing.T, what string, hs []history, cs *ChangeSet) {
	t.Helper()
	for id, h := range hs {
		any := false
		for _, u := range h.updated {
			any = any || u
		}
		want := rowClass(h.states[0], h.states[len(h.states)-1], any)
		got := ""
		for c, b := range map[string]*roaring64.Bitmap{"I": cs.Inserted, "U": cs.Updated, "D": cs.Deleted} {
			if b.Contains(uint64(id)) {
				if got != "" {
					t.Errorf("%s: row %v in two sets", what, h)
				}
				got = c
			}
		}
		if got != want {
			t.Errorf("%s: row with states %v updates %v: %q, want %q", what, h.states, h.updated, got, want)
		}
	}
}

// TestComposeEveryHistory: over every history a row can have across two
// and three spans, the composition says of each row what happened to it
// between the first and the last version, and composing three spans is
// associative.
func TestComposeEveryHistory(t *testing.T) {
	two := histories(2)
	a, b := spanSets(two, 0), spanSets(two, 1)
	got := Compose(a, b)
	checkRows(t, "a∘b", two, got)
	if got.From != 0 || got.To != 2 {
		t.Errorf("span %d..%d, want 0..2", got.From, got.To)
	}
	if Compose(nil, b) != b {
		t.Error("composing with the empty span changed the set")
	}
	three := histories(3)
	x, y, z := spanSets(three, 0), spanSets(three, 1), spanSets(three, 2)
	left, right := Compose(Compose(x, y), z), Compose(x, Compose(y, z))
	checkRows(t, "(x∘y)∘z", three, left)
	checkRows(t, "x∘(y∘z)", three, right)
	if fmt.Sprint(len(two), len(three)) != "15 31" {
		t.Errorf("%d and %d histories: the enumeration changed", len(two), len(three))
	}
}

// TestComposeNilSets: nil sets are empty, and the inputs are not modified.
func TestComposeNilSets(t *testing.T) {
	a := &ChangeSet{From: 1, To: 2, Inserted: roaring64.BitmapOf(5)}
	b := &ChangeSet{From: 2, To: 3, Deleted: roaring64.BitmapOf(5, 1)}
	got := Compose(a, b)
	if !got.Inserted.IsEmpty() || !got.Updated.IsEmpty() || got.Deleted.ToArray()[0] != 1 || got.Deleted.GetCardinality() != 1 {
		t.Errorf("got %v %v %v", got.Inserted.ToArray(), got.Updated.ToArray(), got.Deleted.ToArray())
	}
	if !a.Inserted.Contains(5) || b.Deleted.GetCardinality() != 2 || a.Updated != nil {
		t.Error("inputs modified")
	}
}
