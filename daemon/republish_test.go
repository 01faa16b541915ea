package daemon

import (
	"context"
	"errors"
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

// outageBus fails every PublishChange while down and records what it
// accepts.
type outageBus struct {
	down bool
	got  []*message.ChangeSet
}

func (b *outageBus) Start(context.Context) (string, string, error) { return "", "", nil }
func (b *outageBus) PublishRefreshed(context.Context, *message.Notification) error {
	return nil
}
func (b *outageBus) Close() error { return nil }
func (b *outageBus) PublishChange(_ context.Context, cs *message.ChangeSet) error {
	if b.down {
		return errors.New("nats: connection closed")
	}
	b.got = append(b.got, cs)
	return nil
}

// spanSource answers Changes with changes, or fails with err.
type spanSource struct {
	changes *lance.ChangeSet
	err     error
	asked   [][2]uint64
}

func (s *spanSource) Changes(_ context.Context, _ string, from, to uint64) (*lance.ChangeSet, error) {
	s.asked = append(s.asked, [2]uint64{from, to})
	return s.changes, s.err
}
func (s *spanSource) CommitTime(context.Context, string, uint64) (time.Time, error) {
	return time.Time{}, nil
}
func (s *spanSource) LatestVersion(context.Context, string) (uint64, error) { return 0, nil }
func (s *spanSource) Watermark(context.Context, string) (uint64, bool, error) {
	return 0, false, nil
}

// TestRepublish: change sets the bus refused while NATS was away are
// queued as one span per run of versions and republished, once NATS is
// back, as the change set recomputed from the source over the whole span
// (keeping its commit time); when it cannot be recomputed (the source's
// old version is gone), the span goes out without row ids, so consumers
// compute it themselves, and is not retried forever.
func TestRepublish(t *testing.T) {
	ctx := t.Context()
	at := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	ids := roaring64.BitmapOf(7, 8)
	for _, tc := range []struct {
		name      string
		src       *spanSource
		omitted   bool
		wantInsrt uint64
	}{
		{"recomputed", &spanSource{changes: &lance.ChangeSet{Inserted: ids, Updated: roaring64.New(), Deleted: roaring64.New()}}, false, 2},
		{"cannot be computed", &spanSource{err: errors.New("version 3 not found")}, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bus := &outageBus{down: true}
			p := newPublisher(bus, tc.src, quietLog)
			for v := uint64(3); v < 5; v++ {
				ev := cdc.Event{Kind: cdc.KindVersion, Table: "src", Incarnation: "i", From: v, To: v + 1, Operation: "append", CommittedAt: at}
				if err := p.publish(ctx, ev); err == nil {
					t.Fatalf("publish %d-%d while NATS is down succeeded", v, v+1)
				}
			}
			if p.republishFirst(ctx) {
				t.Fatal("republished while NATS is still down")
			}
			bus.down = false
			if !p.republishFirst(ctx) {
				t.Fatal("nothing republished once NATS is back")
			}
			if p.backlog.pending() != 0 || len(bus.got) != 1 {
				t.Fatalf("pending %d, published %d change sets; want 0 and 1", p.backlog.pending(), len(bus.got))
			}
			cs := bus.got[0]
			if cs.From != 3 || cs.To != 5 || cs.Op != message.OpMultiple || cs.IDsOmitted != tc.omitted || !cs.CommittedAt.Equal(at) {
				t.Fatalf("republished %+v; want span 3-5, op multiple, ids_omitted %v, committed %v", cs, tc.omitted, at)
			}
			if got := card(cs.Inserted); got != tc.wantInsrt {
				t.Fatalf("inserted %d ids, want %d", got, tc.wantInsrt)
			}
			// Each attempt recomputes the span (the one while NATS was down too).
			for _, a := range tc.src.asked {
				if a != [2]uint64{3, 5} {
					t.Fatalf("change source asked %v, want only the span 3-5", tc.src.asked)
				}
			}
		})
	}
}

func card(b *roaring64.Bitmap) uint64 {
	if b == nil {
		return 0
	}
	return b.GetCardinality()
}
