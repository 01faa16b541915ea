package daemon

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/mvd-project/mvd/lance"
)

// FeedBus is a Bus that also gives every view a durable feed of its
// source's change sets (package stream: one durable JetStream consumer per
// view). With a FeedBus the owners are woken by their feeds; the watcher
// wakes an owner directly only while its feed is down or a change set
// could not be published, so a view stays fresh without NATS.
type FeedBus interface {
	Bus
	// ViewFeed creates (or binds) the view's durable feed over source.
	// The daemon calls it before the view's catch-up refresh, so that no
	// change set falls between the two.
	ViewFeed(ctx context.Context, view, source string) (Feed, error)
	// DeleteViewFeed removes the feed of a dropped view (missing: nil).
	DeleteViewFeed(ctx context.Context, view string) error
}

// Feed is one view's durable change-set feed. Fetch is called from one
// goroutine.
type Feed interface {
	// Fetch blocks until at least one change set is available and returns
	// every one ready (a backlog comes as one Delivery). While NATS is
	// unreachable it fails promptly instead of waiting.
	Fetch(ctx context.Context) (Delivery, error)
}

// Delivery is a run of change sets delivered together. It is settled
// once, with Ack (after the view commit that covers it, or after deciding
// the view already reflects it) or Nak (redeliver later).
type Delivery interface {
	// MaxTo is the newest source version in the delivery.
	MaxTo() uint64
	// OldestCommit is the commit time of the oldest source version the
	// delivery names (zero if unknown): lag is measured from it.
	OldestCommit() time.Time
	// Coalesce composes the delivery into one change set from watermark
	// to MaxTo for the source incarnation: (cs, true) apply cs;
	// (nil, true) the view already reflects all of it; (nil, false) it
	// cannot cover the step (gap, ids omitted, other incarnation):
	// compute the change set from the source.
	Coalesce(watermark uint64, incarnation string) (*lance.ChangeSet, bool)
	Ack(ctx context.Context) error
	Nak(ctx context.Context, delay time.Duration) error
}

// Watermarker is implemented by a Refresher that can tell where its view
// is now: its latest version and the source version it reflects (its
// commit's watermark). The owner coalesces deliveries against it (without
// it, against the source version of the owner's own last refresh) and
// reports it with a failure.
type Watermarker interface {
	Watermark(ctx context.Context) (ViewState, error)
}

// ViewState is where a view is.
type ViewState struct {
	// Version is the view's latest version.
	Version uint64
	// SourceVersion is the source version it reflects (0: never
	// refreshed).
	SourceVersion uint64
}

// settled wraps a Delivery so that the feed goroutine learns when the
// owner has settled it (and fetches the next one only then: a backlog
// accumulating meanwhile comes as one delivery).
type settled struct {
	Delivery
	claimed atomic.Bool
	once    sync.Once
	done    chan struct{}
}

func newSettled(d Delivery) *settled { return &settled{Delivery: d, done: make(chan struct{})} }

// claim reports whether the caller is the first to settle s: a delivery is
// settled once, acked or nakked, never both.
func (s *settled) claim() bool { return s.claimed.CompareAndSwap(false, true) }

// resolve makes one attempt to ack (or nak) s; the feed goes on after the
// first, whatever its outcome (a failed one is retried by the owner).
func (s *settled) resolve(ctx context.Context, ack bool, delay time.Duration) error {
	var err error
	if ack {
		err = s.Ack(ctx)
	} else {
		err = s.Nak(ctx, delay)
	}
	s.once.Do(func() { close(s.done) })
	return err
}

// feedRetry bounds the wait between attempts to (re)create a feed or
// fetch from it while NATS is away.
const (
	feedRetryMin = 100 * time.Millisecond
	feedRetryMax = 2 * time.Second
)

// feedRunner is the goroutine that pulls one view's feed and hands each
// delivery to the view's owner. up says whether it is pulling right now
// (false while NATS is away: the watcher then wakes the owner directly).
type feedRunner struct {
	bus          FeedBus
	view, source string
	owner        *viewOwner
	log          interface {
		Debug(string, ...any)
		Warn(string, ...any)
	}
	mu   sync.Mutex
	feed Feed
	up   bool
}

func (f *feedRunner) isUp() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.up
}

func (f *feedRunner) setUp(up bool) {
	f.mu.Lock()
	f.up = up
	f.mu.Unlock()
}

// open creates the feed (once; later calls reuse it).
func (f *feedRunner) open(ctx context.Context) error {
	f.mu.Lock()
	if f.feed != nil {
		f.mu.Unlock()
		return nil
	}
	f.mu.Unlock()
	feed, err := f.bus.ViewFeed(ctx, f.view, f.source)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.feed, f.up = feed, true
	f.mu.Unlock()
	return nil
}

// run pulls until ctx is done.
func (f *feedRunner) run(ctx context.Context) {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval = feedRetryMin, feedRetryMax
	pause := func() bool {
		t := time.NewTimer(min(b.NextBackOff(), feedRetryMax))
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	for ctx.Err() == nil {
		if err := f.open(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			f.setUp(false)
			f.log.Debug("view feed unavailable; refreshing from the source", "view", f.view, "err", err)
			if !pause() {
				return
			}
			continue
		}
		f.mu.Lock()
		feed := f.feed
		f.mu.Unlock()
		d, err := feed.Fetch(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if f.isUp() {
				f.log.Warn("view feed lost; refreshing from the source until it is back", "view", f.view, "err", err)
				// Whatever was committed while the feed was failing
				// is caught up from the source at once.
				f.owner.Notify(wakeUp{})
			}
			// Bind again next time: a consumer deleted under us (the
			// view dropped and created again, an operator) is created
			// anew; while NATS is away that fails fast.
			f.mu.Lock()
			f.feed, f.up = nil, false
			f.mu.Unlock()
			if !pause() {
				return
			}
			continue
		}
		if !f.isUp() {
			f.log.Debug("view feed back", "view", f.view)
			f.setUp(true)
		}
		b.Reset()
		s := newSettled(d)
		f.owner.deliver(s)
		select {
		case <-s.done:
		case <-ctx.Done():
			return // unsettled: the server redelivers it to whoever binds next
		}
	}
}
