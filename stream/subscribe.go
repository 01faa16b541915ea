package stream

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrClosed is returned by Subscription.Next after Close.
var ErrClosed = errors.New("stream: subscription closed")

// notification is a received message, before decoding.
type notification struct {
	subject string
	data    []byte
}

// Subscription receives refresh notifications published after it was
// created, in order. It rides on the Conn's reconnection: when the server
// restarts, the client reconnects and the subscription resumes by itself.
//
// When the refresh stream exists (the daemon created it), the subscription
// is an ordered JetStream consumer: after a reconnect, or the loss of the
// cluster node its consumer lived on, it resumes just after the last
// notification it delivered, so nothing published meanwhile is missed (as
// long as the stream keeps it). Otherwise (no stream, or no
// JetStream permission on an external server) it is a plain subscription,
// and notifications published while disconnected are missed; Resumable
// tells which.
//
// Next may be called from one goroutine at a time; Close from any.
type Subscription struct {
	ch        chan notification
	done      chan struct{}
	once      sync.Once
	views     []string
	subs      []*nats.Subscription
	resumable bool
	// cancel stops the ordered feed's goroutine, which closes stopped.
	cancel  context.CancelFunc
	stopped chan struct{}
}

// SubscribeRefreshes subscribes to the refresh notifications of the given
// views, or of every view (including views created later) when views is
// empty. It returns once the server has registered the interest, so that
// every notification published after it returns is delivered.
func (c *Conn) SubscribeRefreshes(ctx context.Context, views ...string) (*Subscription, error) {
	return c.subscribeRefreshes(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverNewPolicy}, views)
}

// subscribeRefreshes is SubscribeRefreshes with the ordered consumer's
// start (cfg.DeliverPolicy and OptStartTime; the rest is set here).
func (c *Conn) subscribeRefreshes(ctx context.Context, cfg jetstream.OrderedConsumerConfig, views []string) (*Subscription, error) {
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
	s := &Subscription{ch: make(chan notification, 1024), done: make(chan struct{}), views: views}
	deliver := func(subject string, data []byte) {
		select {
		case s.ch <- notification{subject, data}:
		case <-s.done:
		}
	}
	f := &orderedFeed{c: c, filters: subjects, deliver: deliver, kick: make(chan struct{}, 1)}
	err := f.first(ctx, jetstream.ConsumerConfig{DeliverPolicy: cfg.DeliverPolicy, OptStartTime: cfg.OptStartTime})
	if err == nil {
		fctx, cancel := context.WithCancel(context.Background())
		s.cancel, s.stopped, s.resumable = cancel, make(chan struct{}), true
		go func() {
			defer close(s.stopped)
			f.run(fctx)
		}()
		return s, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	c.log.Debug("refresh stream unusable, subscribing without resume", "err", err)
	for _, subject := range subjects {
		sub, err := c.nc.Subscribe(subject, func(m *nats.Msg) { deliver(m.Subject, m.Data) })
		if err != nil {
			s.Close()
			return nil, c.classify(fmt.Errorf("stream: subscribe %s: %w", subject, err))
		}
		// Pending limits are generous; the handler waits for Next anyway.
		_ = sub.SetPendingLimits(-1, -1)
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

// Resumable reports whether the subscription resumes without gaps after a
// reconnect (see Subscription).
func (s *Subscription) Resumable() bool { return s.resumable }

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
		n, err := DecodeRefresh(msg.data)
		if err != nil {
			return nil, fmt.Errorf("notification on %s: %w", msg.subject, err)
		}
		return n, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.done:
		return nil, ErrClosed
	}
}

// Close ends the subscription. Safe to call more than once and
// concurrently with Next.
func (s *Subscription) Close() error {
	var err error
	s.once.Do(func() {
		close(s.done)
		if s.cancel != nil {
			s.cancel()
			<-s.stopped
		}
		for _, sub := range s.subs {
			if uerr := sub.Unsubscribe(); uerr != nil && !errors.Is(uerr, nats.ErrConnectionClosed) {
				err = errors.Join(err, uerr)
			}
		}
	})
	return err
}
