package daemon

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/matview"
)

// fakeDelivery is a delivery of consecutive one-step change sets
// from..to, each inserting row id = its version.
type fakeDelivery struct {
	from, to    uint64
	incarnation string
	omitted     bool

	mu       sync.Mutex
	acks     int
	naks     int
	delay    time.Duration
	ackFails int // the first ackFails acks fail (NATS away)
}

func (d *fakeDelivery) MaxTo() uint64           { return d.to }
func (d *fakeDelivery) OldestCommit() time.Time { return time.Now() }
func (d *fakeDelivery) Coalesce(wm uint64, inc string) (*lance.ChangeSet, bool) {
	switch {
	case inc != d.incarnation:
		return nil, false
	case d.to <= wm:
		return nil, true
	case d.omitted || d.from > wm:
		return nil, false
	}
	ins := roaring64.New()
	for v := wm + 1; v <= d.to; v++ {
		ins.Add(v)
	}
	return &lance.ChangeSet{From: wm, To: d.to, Inserted: ins, Updated: roaring64.New(), Deleted: roaring64.New()}, true
}
func (d *fakeDelivery) Ack(context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ackFails > 0 {
		d.ackFails--
		return errors.New("nats: connection closed")
	}
	d.acks++
	return nil
}
func (d *fakeDelivery) Nak(_ context.Context, delay time.Duration) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.naks++
	d.delay = delay
	return nil
}
func (d *fakeDelivery) settled() (acks, naks int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.acks, d.naks
}

// wmRefresher is a fakeRefresher that also tells its watermark.
type wmRefresher struct{ *fakeRefresher }

func (r wmRefresher) Watermark(context.Context) (ViewState, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return ViewState{Version: r.version, SourceVersion: r.reflct}, nil
}

// TestOwnerDeliveries: a delivery's change sets go to the refresh when
// they span watermark..newest; a delivery the watermark covers is acked
// without a refresh; a gap, omitted ids or another incarnation refresh
// from the source; acks come after the commit, a failed refresh naks.
func TestOwnerDeliveries(t *testing.T) {
	f := &fakeRefresher{}
	r := wmRefresher{f}
	o, _, _ := runOwner(t, ownerConfig{Refresher: r, Incarnation: func() string { return "inc1" }, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	deliver := func(d *fakeDelivery) *settled {
		s := newSettled(d)
		o.deliver(s)
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			t.Fatalf("delivery %d..%d never settled", d.from, d.to)
		}
		return s
	}
	calls := func() []RefreshOptions { c, _ := f.snapshot(); return c }

	// 0..3 from watermark 0 (never refreshed): usable.
	d := &fakeDelivery{from: 0, to: 3, incarnation: "inc1"}
	deliver(d)
	c := calls()
	if len(c) != 1 || c[0].Changes == nil || c[0].Changes.From != 0 || c[0].Changes.To != 3 || c[0].Changes.Inserted.GetCardinality() != 3 {
		t.Fatalf("refresh calls %+v: want one with the coalesced change set 0..3", c)
	}
	if a, n := d.settled(); a != 1 || n != 0 {
		t.Fatalf("acks %d naks %d, want 1 0", a, n)
	}
	// A redelivery of 2..3: covered, acked, no refresh.
	d = &fakeDelivery{from: 2, to: 3, incarnation: "inc1"}
	deliver(d)
	if len(calls()) != 1 {
		t.Fatalf("a covered delivery refreshed: %+v", calls())
	}
	if a, _ := d.settled(); a != 1 {
		t.Fatal("covered delivery not acked")
	}
	// Gap (5..6 after watermark 3), omitted ids, other incarnation: a
	// refresh from the source (no Changes), then ack.
	for _, d := range []*fakeDelivery{
		{from: 5, to: 6, incarnation: "inc1"},
		{from: 6, to: 7, incarnation: "inc1", omitted: true},
		{from: 7, to: 8, incarnation: "inc0"},
	} {
		n := len(calls())
		deliver(d)
		c := calls()
		if len(c) != n+1 || c[n].Changes != nil || c[n].SourceVersion != d.to {
			t.Fatalf("delivery %+v: calls %+v, want one refresh from the source to %d", d, c[n:], d.to)
		}
		if a, _ := d.settled(); a != 1 {
			t.Fatalf("delivery %+v not acked", d)
		}
	}
	// A failing refresh naks with the backoff; the owner retries from the
	// source by itself.
	f.mu.Lock()
	f.fail = func(call int) error {
		if call == 4 {
			return errors.New("disk full")
		}
		return nil
	}
	f.mu.Unlock()
	d = &fakeDelivery{from: 8, to: 9, incarnation: "inc1"}
	deliver(d)
	if a, n := d.settled(); a != 0 || n != 1 {
		t.Fatalf("failed refresh: acks %d naks %d, want 0 1", a, n)
	}
	waitUntil(t, "the retry", func() bool { return f.reflected() == 9 })
}

// TestOwnerAckRetry: an ack that fails after the view commit (NATS away)
// is tried again until it goes through, rather than leaving the change
// sets to a redelivery after the consumer's ack wait.
func TestOwnerAckRetry(t *testing.T) {
	f := &fakeRefresher{}
	o, _, _ := runOwner(t, ownerConfig{Refresher: wmRefresher{f}, Incarnation: func() string { return "inc1" }})
	d := &fakeDelivery{from: 0, to: 2, incarnation: "inc1", ackFails: 3}
	s := newSettled(d)
	o.deliver(s)
	select {
	case <-s.done: // the feed goes on after the first attempt
	case <-time.After(20 * time.Second):
		t.Fatal("delivery never settled")
	}
	waitUntil(t, "the ack to go through", func() bool { a, _ := d.settled(); return a == 1 })
}

// TestOwnerDeliveryManual: a manual view acks deliveries at once (the
// next explicit refresh computes from the source) and does not refresh.
func TestOwnerDeliveryManual(t *testing.T) {
	f := &fakeRefresher{}
	o, _, _ := runOwner(t, ownerConfig{Refresher: f, Policy: matview.Policy{Mode: matview.Manual}})
	d := &fakeDelivery{from: 0, to: 2}
	s := newSettled(d)
	o.deliver(s)
	<-s.done
	if a, _ := d.settled(); a != 1 {
		t.Fatal("not acked")
	}
	if c, _ := f.snapshot(); len(c) != 0 {
		t.Fatalf("manual view refreshed: %+v", c)
	}
}
