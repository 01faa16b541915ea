package stream

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
)

// ErrClosed is returned by Subscription.Next after Close.
var ErrClosed = errors.New("stream: subscription closed")

// Subscription receives refresh notifications live: those published while
// it is subscribed and connected. It rides on the Conn's reconnection: when
// the server restarts, the client reconnects and re-subscribes by itself;
// notifications published while it was disconnected are not replayed.
//
// Next may be called from one goroutine at a time; Close from any.
type Subscription struct {
	conn  *Conn
	subs  []*nats.Subscription
	ch    chan *nats.Msg
	done  chan struct{}
	once  sync.Once
	views []string
}

// SubscribeRefreshes subscribes to the refresh notifications of the given
// views, or of every view (including views created later) when views is
// empty. It returns once the server has registered the interest, so that
// every notification published after it returns is delivered.
func (c *Conn) SubscribeRefreshes(ctx context.Context, views ...string) (*Subscription, error) {
	subjects := []string{c.subj.AllRefreshed()}
	if len(views) > 0 {
		subjects = subjects[:0]
		for _, v := range views {
			s, err := c.subj.Refreshed(v)
			if err != nil {
				return nil, err
			}
			subjects = append(subjects, s)
		}
	}
	s := &Subscription{conn: c, ch: make(chan *nats.Msg, 4096), done: make(chan struct{}), views: views}
	for _, subject := range subjects {
		sub, err := c.nc.ChanSubscribe(subject, s.ch)
		if err != nil {
			s.Close()
			return nil, c.classify(fmt.Errorf("stream: subscribe %s: %w", subject, err))
		}
		s.subs = append(s.subs, sub)
	}
	if err := c.flush(ctx); err != nil {
		s.Close()
		return nil, c.classify(fmt.Errorf("stream: subscribe: %w", err))
	}
	return s, nil
}

// Views returns the views subscribed to; empty means all.
func (s *Subscription) Views() []string { return s.views }

// Next returns the next notification, blocking until one arrives, ctx ends
// or the subscription is closed (ErrClosed). A message that fails to decode
// yields an error wrapping ErrBadMessage or ErrUnsupportedSchema; the
// subscription stays usable and Next can be called again.
func (s *Subscription) Next(ctx context.Context) (*RefreshNotification, error) {
	select {
	case <-s.done:
		return nil, ErrClosed
	default:
	}
	select {
	case msg := <-s.ch:
		n, err := DecodeRefresh(msg.Data)
		if err != nil {
			return nil, fmt.Errorf("notification on %s: %w", msg.Subject, err)
		}
		return n, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.done:
		return nil, ErrClosed
	}
}

// Close unsubscribes. Safe to call more than once and concurrently with
// Next.
func (s *Subscription) Close() error {
	var err error
	s.once.Do(func() {
		for _, sub := range s.subs {
			if uerr := sub.Unsubscribe(); uerr != nil && !errors.Is(uerr, nats.ErrConnectionClosed) {
				err = errors.Join(err, uerr)
			}
		}
		close(s.done)
	})
	return err
}
