package stream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The ordered feed's timings. A subscriber notices a lost consumer (its
// node killed) after two missed heartbeats, and re-creates it from the
// next stream sequence with short attempts, so that it resumes as soon as
// the cluster has a leader for the refresh stream again (seconds), not
// after the client library's fixed 10 s attempts and growing backoff.
const (
	orderedHeartbeat  = time.Second
	orderedExpiry     = 10 * time.Second
	orderedAttempt    = 2 * time.Second        // one consumer-create request
	orderedRetryWait  = 100 * time.Millisecond // between failed attempts
	orderedFirstLimit = 10 * time.Second       // the first creation's retries
	orderedInactive   = 5 * time.Minute        // server drops a consumer nobody pulls
)

// orderedFeed is an ordered, gap-free feed of the refresh stream for one
// Subscription: an ephemeral one-replica consumer in memory, as nats.go's
// ordered consumer, but re-created here from the next stream sequence
// whenever it is lost (heartbeats stop, it is deleted, the client
// reconnects to another node, a sequence gap), with attempts bounded by
// orderedAttempt and retried until the Subscription closes.
type orderedFeed struct {
	c       *Conn
	filters []string
	deliver func(subject string, data []byte)
	kick    chan struct{} // a reset is wanted (cap 1)

	mu     sync.Mutex
	serial int    // of the consumer in use; older ones' callbacks are ignored
	next   uint64 // stream sequence wanted next
	dseq   uint64 // consumer sequence last delivered by the current consumer
	cons   jetstream.Consumer
	cc     jetstream.ConsumeContext
}

// isFinal reports a consumer-create error that retrying will not cure
// (no refresh stream, no JetStream): the caller falls back to a plain
// subscription.
func isFinal(err error) bool {
	return errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrJetStreamNotEnabled) ||
		errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) || !errors.Is(err, ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded)
}

// first creates the feed's first consumer starting as cfg says (new
// notifications, or from a time), retrying while the cluster cannot
// answer, up to orderedFirstLimit or ctx.
func (f *orderedFeed) first(ctx context.Context, cfg jetstream.ConsumerConfig) error {
	limit := time.Now().Add(orderedFirstLimit)
	for {
		err := f.start(ctx, cfg)
		if err == nil || ctx.Err() != nil || isFinal(err) || time.Now().After(limit) {
			return err
		}
		if err := sleepCtx(ctx, orderedRetryWait); err != nil {
			return err
		}
	}
}

// start creates a consumer with cfg and starts consuming it.
func (f *orderedFeed) start(ctx context.Context, cfg jetstream.ConsumerConfig) error {
	cfg.FilterSubjects = f.filters
	cfg.AckPolicy = jetstream.AckNonePolicy
	cfg.MaxDeliver = 1
	cfg.MemoryStorage = true
	cfg.Replicas = 1
	cfg.InactiveThreshold = orderedInactive
	actx, cancel := context.WithTimeout(ctx, orderedAttempt)
	defer cancel()
	cons, err := f.c.js.CreateOrUpdateConsumer(actx, f.c.subj.RefreshStream(), cfg)
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		return f.c.classify(fmt.Errorf("stream: subscribe to refreshes: %w", err))
	}
	f.mu.Lock()
	f.serial++
	serial := f.serial
	f.cons, f.dseq = cons, 0
	f.next = cons.CachedInfo().Delivered.Stream + 1
	f.mu.Unlock()
	cc, err := cons.Consume(f.handler(serial), jetstream.PullHeartbeat(orderedHeartbeat), jetstream.PullExpiry(orderedExpiry),
		jetstream.ConsumeErrHandler(f.errHandler(serial)))
	if err != nil {
		return f.c.classify(fmt.Errorf("stream: subscribe to refreshes: %w", err))
	}
	f.mu.Lock()
	f.cc = cc
	f.mu.Unlock()
	return nil
}

func (f *orderedFeed) handler(serial int) jetstream.MessageHandler {
	return func(m jetstream.Msg) {
		md, err := m.Metadata()
		f.mu.Lock()
		if serial != f.serial {
			f.mu.Unlock()
			return
		}
		if err != nil || md.Sequence.Consumer != f.dseq+1 {
			f.mu.Unlock()
			f.reset()
			return
		}
		f.dseq, f.next = md.Sequence.Consumer, md.Sequence.Stream+1
		f.mu.Unlock()
		f.deliver(m.Subject(), m.Data())
	}
}

func (f *orderedFeed) errHandler(serial int) func(jetstream.ConsumeContext, error) {
	return func(_ jetstream.ConsumeContext, err error) {
		f.c.log.Debug("refresh subscription", "err", err)
		f.mu.Lock()
		current := serial == f.serial
		f.mu.Unlock()
		if current && (errors.Is(err, jetstream.ErrNoHeartbeat) || errors.Is(err, jetstream.ErrConsumerDeleted) ||
			errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, nats.ErrNoResponders) ||
			errors.Is(err, jetstream.ErrConsumerLeadershipChanged)) {
			f.reset()
		}
	}
}

// reset asks run for a new consumer.
func (f *orderedFeed) reset() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// run re-creates the consumer whenever it is lost, and after every
// reconnect (the consumer may have lived on the node the client lost),
// until ctx ends; then it stops the consumer.
func (f *orderedFeed) run(ctx context.Context) {
	status := f.c.nc.StatusChanged(nats.CONNECTED)
	defer f.c.nc.RemoveStatusListener(status)
	defer f.stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.kick:
		case <-status:
		}
		f.stop()
		for {
			f.mu.Lock()
			next := f.next
			f.mu.Unlock()
			err := f.start(ctx, jetstream.ConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: next})
			if err == nil {
				break
			}
			f.c.log.Debug("refresh subscription: re-create its consumer", "next", next, "err", err)
			if sleepCtx(ctx, orderedRetryWait) != nil {
				return
			}
		}
	}
}

// stop stops consuming and deletes the consumer (best effort: the server
// drops it after orderedInactive anyway).
func (f *orderedFeed) stop() {
	f.mu.Lock()
	cc, cons := f.cc, f.cons
	f.cc, f.cons = nil, nil
	f.serial++ // callbacks still in flight for it are ignored
	f.mu.Unlock()
	if cc != nil {
		cc.Stop()
	}
	if cons != nil && f.c.nc.IsConnected() {
		ctx, cancel := context.WithTimeout(context.Background(), orderedRetryWait*5)
		defer cancel()
		_ = f.c.js.DeleteConsumer(ctx, f.c.subj.RefreshStream(), cons.CachedInfo().Name)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
