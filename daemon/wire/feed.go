package wire

import (
	"context"
	"errors"
	"time"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/stream"
)

var _ daemon.FeedBus = (*Bus)(nil)

// fetchMax bounds one delivery (the consumer's MaxAckPending, 1000).
const fetchMax = 1000

// feedBindTimeout bounds one attempt to create or bind a view's consumer.
const feedBindTimeout = 2 * time.Second

// ViewFeed creates or binds the view's durable JetStream consumer
// ("view-<view>" on mvd.cdc.<source>). Daemons sharing one NATS share it:
// each change set goes to one of them.
func (b *Bus) ViewFeed(ctx context.Context, view, source string) (daemon.Feed, error) {
	conn := b.conn
	if conn == nil {
		return nil, errors.New("NATS is not started")
	}
	// A request the cluster leaves unanswered (a node just lost, leaders
	// being elected) fails after feedBindTimeout, not the client's 5 s,
	// so the feed runner tries again sooner.
	ctx, cancel := context.WithTimeout(ctx, feedBindTimeout)
	defer cancel()
	vc, err := conn.ViewConsumer(ctx, view, source, stream.ConsumerConfig{})
	if err != nil {
		return nil, err
	}
	return feed{vc}, nil
}

// DeleteViewFeed deletes a dropped view's consumer.
func (b *Bus) DeleteViewFeed(ctx context.Context, view string) error {
	conn := b.conn
	if conn == nil {
		return nil
	}
	return conn.DeleteViewConsumer(ctx, view)
}

type feed struct{ vc *stream.ViewConsumer }

func (f feed) Fetch(ctx context.Context) (daemon.Delivery, error) {
	batch, err := f.vc.Fetch(ctx, fetchMax)
	if err != nil {
		return nil, err
	}
	return delivery{batch}, nil
}

type delivery struct{ b *stream.Batch }

func (d delivery) MaxTo() uint64 { return d.b.MaxTo() }

func (d delivery) OldestCommit() time.Time {
	var t time.Time
	for _, cs := range d.b.ChangeSets {
		if !cs.CommittedAt.IsZero() && (t.IsZero() || cs.CommittedAt.Before(t)) {
			t = cs.CommittedAt
		}
	}
	return t
}

func (d delivery) Coalesce(watermark uint64, incarnation string) (*lance.ChangeSet, bool) {
	cs, ok := d.b.Coalesce(watermark, incarnation)
	if cs == nil {
		return nil, ok
	}
	return &lance.ChangeSet{From: cs.From, To: cs.To, Inserted: cs.Inserted, Updated: cs.Updated, Deleted: cs.Deleted}, true
}

func (d delivery) Ack(ctx context.Context) error { return d.b.Ack(ctx) }

func (d delivery) Nak(ctx context.Context, delay time.Duration) error { return d.b.Nak(ctx, delay) }
