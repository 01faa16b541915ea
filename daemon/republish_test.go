package daemon

import (
	"reflect"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/cdc"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/message"
)

// TestBacklog: spans of consecutive versions merge; a new incarnation
// drops the old one's spans; done removes only what was published, even
// if the span grew meanwhile.
func TestBacklog(t *testing.T) {
	q := newBacklog()
	q.add("s", span{incarnation: "a", from: 1, to: 2, op: "append"})
	q.add("s", span{incarnation: "a", from: 2, to: 3, op: "delete"})
	q.add("s", span{incarnation: "a", from: 5, to: 6}) // a gap: a span of its own
	q.add("t", span{incarnation: "x", from: 9, to: 10})
	want := []span{{incarnation: "a", from: 1, to: 3}, {incarnation: "a", from: 5, to: 6}}
	if got := q.spans["s"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("spans %+v, want %+v", got, want)
	}
	if !q.has("s") || q.pending() != 3 {
		t.Fatalf("has %v pending %d", q.has("s"), q.pending())
	}
	first := q.first()["s"]
	q.add("s", span{incarnation: "a", from: 6, to: 7}) // grows the second span
	q.done("s", first)
	if got := q.spans["s"]; !reflect.DeepEqual(got, []span{{incarnation: "a", from: 5, to: 7}}) {
		t.Fatalf("after done: %+v", got)
	}
	// The published part of a span that grew stays removed.
	q.add("t", span{incarnation: "x", from: 10, to: 11})
	q.done("t", span{incarnation: "x", from: 9, to: 10})
	if got := q.spans["t"]; !reflect.DeepEqual(got, []span{{incarnation: "x", from: 10, to: 11}}) {
		t.Fatalf("partial done: %+v", got)
	}
	// Recreated source: the old incarnation's spans are useless.
	q.add("s", span{incarnation: "b", from: 0, to: 1})
	if got := q.spans["s"]; !reflect.DeepEqual(got, []span{{incarnation: "b", from: 0, to: 1}}) {
		t.Fatalf("new incarnation: %+v", got)
	}
	q.done("s", span{incarnation: "b", from: 0, to: 1})
	q.done("t", span{incarnation: "x", from: 10, to: 11})
	if q.pending() != 0 || q.has("s") {
		t.Fatalf("left: %+v", q.spans)
	}
}

// TestChangeSetOf: a watcher event becomes its message as it was: one
// step keeps its operation, a wider span or an unknown one is "multiple",
// and an event without a change set is published without row ids.
func TestChangeSetOf(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	ev := cdc.Event{Kind: cdc.KindVersion, Table: "src", Incarnation: "1.42", From: 3, To: 4, Operation: "append", CommittedAt: at, SchemaFingerprint: "fp",
		Changes: &lance.ChangeSet{From: 3, To: 4, Inserted: roaring64.BitmapOf(7, 8), Updated: roaring64.New(), Deleted: roaring64.BitmapOf(1)}}
	cs := changeSetOf(ev)
	if cs.Source != "src" || cs.Incarnation != "1.42" || cs.From != 3 || cs.To != 4 || cs.Op != "append" || cs.SchemaFingerprint != "fp" ||
		!cs.CommittedAt.Equal(at) || cs.IDsOmitted || !cs.Inserted.Equals(roaring64.BitmapOf(7, 8)) || !cs.Deleted.Equals(roaring64.BitmapOf(1)) {
		t.Fatalf("one step: %+v", cs)
	}
	if _, err := message.EncodeChangeSet(cs); err != nil {
		t.Fatal(err)
	}
	ev.From, ev.Changes = 1, nil
	cs = changeSetOf(ev)
	if cs.Op != message.OpMultiple || !cs.IDsOmitted || cs.Inserted != nil {
		t.Fatalf("span without ids: %+v", cs)
	}
	if _, err := message.EncodeChangeSet(cs); err != nil {
		t.Fatal(err)
	}
}
