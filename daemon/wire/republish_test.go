package wire

import (
	"reflect"
	"testing"
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
