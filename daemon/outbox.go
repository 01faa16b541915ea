package daemon

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/mvd-project/mvd/message"
)

// outboxLimit bounds the notifications kept per view while NATS is away;
// beyond it the oldest go (the daemon's next start publishes, "recovered",
// the commits its refresh stream never got).
const outboxLimit = 1000

// outbox publishes refresh notifications and keeps those it could not
// publish (NATS away: a node of the cluster lost, its stream electing a
// leader) to publish them later, per view in commit order, so that every
// committed refresh is notified once NATS is back. While a view has
// notifications kept, its new ones queue behind them without a publish
// attempt, so refreshes do not wait on NATS. Its goroutine (run, owned by
// Server.Run) retries every republishEvery.
type outbox struct {
	bus Bus
	log *slog.Logger

	mu      sync.Mutex
	pending map[string][]*message.Notification
	kick    chan struct{}
}

func newOutbox(bus Bus, log *slog.Logger) *outbox {
	return &outbox{bus: bus, log: log, pending: map[string][]*message.Notification{}, kick: make(chan struct{}, 1)}
}

// publish publishes n, or keeps it (behind the view's earlier ones).
func (o *outbox) publish(ctx context.Context, n *message.Notification) {
	o.mu.Lock()
	queued := len(o.pending[n.View]) > 0
	if queued {
		o.keepLocked(n)
	}
	o.mu.Unlock()
	if queued {
		return
	}
	if err := o.bus.PublishRefreshed(ctx, n); err != nil {
		o.log.Warn("publish refresh notification; kept to publish when NATS is back", "view", n.View, "err", err)
		o.mu.Lock()
		o.keepLocked(n)
		o.mu.Unlock()
	}
}

func (o *outbox) keepLocked(n *message.Notification) {
	q := append(o.pending[n.View], n)
	if len(q) > outboxLimit {
		o.log.Warn("refresh notifications kept while NATS is away exceed the limit; dropping the oldest", "view", n.View, "limit", outboxLimit)
		q = q[len(q)-outboxLimit:]
	}
	o.pending[n.View] = q
	select {
	case o.kick <- struct{}{}:
	default:
	}
}

// run retries the kept notifications until ctx ends.
func (o *outbox) run(ctx context.Context) {
	t := time.NewTicker(republishEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-o.kick:
		}
		for o.flush(ctx) > 0 {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}
}

// flush publishes what is kept, each view's in order, stopping a view at
// its first failure; it returns how many notifications are still kept.
func (o *outbox) flush(ctx context.Context) int {
	o.mu.Lock()
	views := make([]string, 0, len(o.pending))
	for v := range o.pending {
		views = append(views, v)
	}
	o.mu.Unlock()
	left := 0
	for _, v := range views {
		for {
			o.mu.Lock()
			q := o.pending[v]
			if len(q) == 0 {
				delete(o.pending, v)
				o.mu.Unlock()
				break
			}
			n := q[0]
			o.mu.Unlock()
			pctx, cancel := context.WithTimeout(ctx, republishTimeout)
			err := o.bus.PublishRefreshed(pctx, n)
			cancel()
			if err != nil {
				o.mu.Lock()
				left += len(o.pending[v])
				o.mu.Unlock()
				o.log.Debug("republish refresh notification", "view", v, "err", err)
				break
			}
			o.mu.Lock()
			if q := o.pending[v]; len(q) > 0 && q[0] == n {
				o.pending[v] = q[1:]
			}
			o.mu.Unlock()
		}
	}
	return left
}
