package stream

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// SubscribeRefreshesSince is SubscribeRefreshes starting with the
// notifications the refresh stream received at or after since (those it
// still keeps), then the new ones. A subscriber that had to connect again
// to a daemon that came back on another address (mvd subscribe) uses it
// to get what was published while it was away; it must drop the ones it
// had already seen (each view's notifications come in commit order). When
// the refresh stream is unusable it falls back to a live subscription, as
// SubscribeRefreshes does.
func (c *Conn) SubscribeRefreshesSince(ctx context.Context, since time.Time, views ...string) (*Subscription, error) {
	return c.subscribeRefreshes(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartTimePolicy,
		OptStartTime:  &since,
	}, views)
}
