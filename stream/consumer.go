package stream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// errPullExpired ends a pull request that waited its full term.
var errPullExpired = errors.New("pull request expired")

// ConsumerConfig tunes a view's durable consumer.
type ConsumerConfig struct {
	// MaxAckPending bounds the change sets delivered and not yet acked
	// (default 1000); it also bounds what one Fetch can return.
	MaxAckPending int
	// AckWait is how long a delivered change set may stay unacked before
	// the server redelivers it (default 30s). Long refreshes call
	// Batch.InProgress to extend it.
	AckWait time.Duration
	// DeliverAll makes a newly created consumer start at the oldest change
	// set the stream holds; by default it starts with the next one
	// published, because a new view catches up from the source anyway.
	// It has no effect on an existing consumer.
	DeliverAll bool
}

// ViewConsumer is a view's durable pull consumer on its source's change
// sets. The server keeps its position across restarts of the daemon and of
// the server. Several processes may bind the same view's consumer: each
// change set then goes to one of them, and the view's commit protocol
// settles who wins.
//
// A ViewConsumer is safe for concurrent use, but a view should have one
// owner calling Fetch at a time so that its batches are whole.
type ViewConsumer struct {
	conn   *Conn
	cons   jetstream.Consumer
	view   string
	source string
	name   string
}

// ConsumerName is the durable consumer name of a view: "view-" and the
// view's token, or for a long name a prefix of it and a hash, so that it
// stays a short, valid file name in the store.
func ConsumerName(view string) (string, error) {
	tok, err := EncodeToken(view)
	if err != nil {
		return "", err
	}
	if len(tok) <= 120 {
		return "view-" + tok, nil
	}
	sum := sha256.Sum256([]byte(view))
	return "view-" + tok[:80] + "-" + hex.EncodeToString(sum[:12]), nil
}

// ViewConsumer creates (or binds, updating its limits and source) the
// durable consumer of view over source. Creating the consumer before the
// view's initial catch-up from the source means no change set falls
// between the two.
func (c *Conn) ViewConsumer(ctx context.Context, view, source string, cfg ConsumerConfig) (*ViewConsumer, error) {
	name, err := ConsumerName(view)
	if err != nil {
		return nil, err
	}
	subject, err := c.subj.ChangeSets(source)
	if err != nil {
		return nil, err
	}
	if cfg.MaxAckPending <= 0 {
		cfg.MaxAckPending = 1000
	}
	if cfg.AckWait <= 0 {
		cfg.AckWait = 30 * time.Second
	}
	policy := jetstream.DeliverNewPolicy
	if cfg.DeliverAll {
		policy = jetstream.DeliverAllPolicy
	}
	jc := jetstream.ConsumerConfig{
		Durable:       name,
		Description:   fmt.Sprintf("mvd view %q over source %q", view, source),
		FilterSubject: subject,
		DeliverPolicy: policy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       cfg.AckWait,
		MaxAckPending: cfg.MaxAckPending,
		MaxDeliver:    -1,
		MaxWaiting:    512,
	}
	// As for a stream: a cluster busy electing the stream's or the
	// consumer's leader may leave a create unanswered; the next try finds
	// the consumer made or makes it.
	cons, err := tryAnswered(ctx, func(ctx context.Context) (jetstream.Consumer, error) {
		return c.createConsumerOnce(ctx, jc)
	})
	if err != nil {
		return nil, c.classify(fmt.Errorf("stream: consumer of view %s on %s: %w", view, subject, err))
	}
	return &ViewConsumer{conn: c, cons: cons, view: view, source: source, name: name}, nil
}

// createConsumerOnce is one try of ViewConsumer's create.
func (c *Conn) createConsumerOnce(ctx context.Context, jc jetstream.ConsumerConfig) (jetstream.Consumer, error) {
	stream := c.subj.ChangeSetStream()
	cons, err := c.js.CreateOrUpdateConsumer(ctx, stream, jc)
	if errors.Is(err, jetstream.ErrConsumerExists) || isDeliverPolicyChange(err) {
		// The deliver policy of an existing consumer cannot change; keep
		// the one it has.
		if info, ierr := c.js.Consumer(ctx, stream, jc.Durable); ierr == nil {
			jc.DeliverPolicy = info.CachedInfo().Config.DeliverPolicy
			cons, err = c.js.CreateOrUpdateConsumer(ctx, stream, jc)
		}
	}
	return cons, err
}

func isDeliverPolicyChange(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeConsumerCreate
}

// DeleteViewConsumer removes a dropped view's consumer; a missing one is
// not an error.
func (c *Conn) DeleteViewConsumer(ctx context.Context, view string) error {
	name, err := ConsumerName(view)
	if err != nil {
		return err
	}
	err = c.js.DeleteConsumer(ctx, c.subj.ChangeSetStream(), name)
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return c.classify(fmt.Errorf("stream: delete consumer of view %s: %w", view, err))
	}
	return nil
}

// Name is the durable consumer's name.
func (v *ViewConsumer) Name() string { return v.name }

// Fetch blocks until at least one change set is available (or ctx ends),
// then takes every change set the consumer has ready at that moment, up
// to max, so that the caller can coalesce a backlog into one refresh. (A
// change set stored microseconds ago may not be ready yet; it comes with
// the next Fetch, at once.) Messages that
// fail to decode are terminated (never redelivered) and logged; they do
// not appear in the batch.
//
// While the connection is down Fetch returns an error wrapping
// ErrUnavailable rather than waiting: the caller can refresh from the
// source and call Fetch again later (see Conn.Connected).
func (v *ViewConsumer) Fetch(ctx context.Context, max int) (*Batch, error) {
	if max <= 0 {
		max = 1
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !v.conn.nc.IsConnected() {
			return nil, fmt.Errorf("%w: fetch for view %s: not connected", ErrUnavailable, v.view)
		}
		b := &Batch{conn: v.conn}
		if err := v.fetchInto(ctx, b, 1, 30*time.Second); err != nil {
			return nil, err
		}
		// Then everything else available. A no-wait pull takes what the
		// consumer has ready, redeliveries included; but it may not yet
		// count messages stored a moment ago, so when the last message
		// says more are pending and the no-wait pull brought none, a pull
		// for exactly those follows (it ends as soon as they arrive; its
		// short expiry only matters if another process sharing the
		// consumer took them).
		// When the first message says nothing else is pending (the
		// common case: one commit), the no-wait pull is skipped: its round
		// trip would delay every refresh; a redelivery it might have
		// brought comes with the next Fetch, at once.
		for len(b.msgs) > 0 && len(b.msgs) < max && (len(b.msgs) > 1 || lastPending(b) > 0) {
			had := len(b.msgs)
			v.fetchRest(ctx, b, max-had, 0)
			pending := lastPending(b)
			if pending == 0 {
				break
			}
			if len(b.msgs) == had {
				v.fetchRest(ctx, b, int(min(uint64(max-had), pending)), 50*time.Millisecond)
				if len(b.msgs) == had {
					break
				}
			}
		}
		if len(b.ChangeSets) > 0 {
			return b, nil
		}
	}
}

// fetchRest is fetchInto for the rest of a batch (wait 0: no-wait pull);
// an error only ends the batch early, the rest comes next time.
func (v *ViewConsumer) fetchRest(ctx context.Context, b *Batch, n int, wait time.Duration) {
	var err error
	if wait == 0 {
		err = v.fetchNoWait(b, n)
	} else {
		err = v.fetchInto(ctx, b, n, wait)
	}
	if err != nil {
		v.conn.log.Debug("fetch the rest of a backlog", "view", v.view, "err", err)
	}
}

// lastPending is how many messages the consumer had not yet delivered when
// it delivered the batch's last one.
func lastPending(b *Batch) uint64 {
	if len(b.msgs) == 0 {
		return 0
	}
	md, err := b.msgs[len(b.msgs)-1].Metadata()
	if err != nil {
		return 0
	}
	return md.NumPending
}

// fetchNoWait adds to b up to n messages the consumer has ready now.
func (v *ViewConsumer) fetchNoWait(b *Batch, n int) error {
	mb, err := v.cons.FetchNoWait(n)
	if err != nil {
		return v.conn.classify(fmt.Errorf("stream: fetch for view %s: %w", v.view, err))
	}
	v.collect(b, mb)
	if err := mb.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
		return v.conn.classify(fmt.Errorf("stream: fetch for view %s: %w", v.view, err))
	}
	return nil
}

// fetchInto adds up to n messages to b with one pull request that waits up
// to wait for them.
func (v *ViewConsumer) fetchInto(ctx context.Context, b *Batch, n int, wait time.Duration) (retErr error) {
	var (
		mb  jetstream.MessageBatch
		err error
	)
	{ // scope of the pull request's contexts
		if d, ok := ctx.Deadline(); ok && time.Until(d) < time.Millisecond {
			return context.DeadlineExceeded // FetchContext refuses a spent deadline
		}
		// A pull request does not notice a lost server until its
		// heartbeats stop; a status listener ends it at once instead.
		wctx, cancel := context.WithTimeoutCause(ctx, wait, errPullExpired)
		defer cancel()
		lctx, lost := context.WithCancelCause(wctx)
		defer lost(nil)
		status := v.conn.nc.StatusChanged(nats.RECONNECTING, nats.CLOSED)
		defer v.conn.nc.RemoveStatusListener(status)
		go func() {
			select {
			case st, ok := <-status:
				if ok {
					lost(fmt.Errorf("%w: connection %s", ErrUnavailable, st))
				}
			case <-lctx.Done():
			}
		}()
		if !v.conn.nc.IsConnected() {
			return fmt.Errorf("%w: fetch for view %s: not connected", ErrUnavailable, v.view)
		}
		mb, err = v.cons.Fetch(n, jetstream.FetchContext(lctx))
		defer func() {
			if cause := context.Cause(lctx); errors.Is(cause, ErrUnavailable) && len(b.msgs) == 0 && ctx.Err() == nil {
				retErr = fmt.Errorf("stream: fetch for view %s: %w", v.view, cause)
			}
		}()
	}
	if err != nil {
		if ctx.Err() != nil { // e.g. the deadline passed while setting up
			return ctx.Err()
		}
		return v.conn.classify(fmt.Errorf("stream: fetch for view %s: %w", v.view, err))
	}
	v.collect(b, mb)
	err = mb.Error()
	switch {
	case err == nil, errors.Is(err, jetstream.ErrNoMessages), errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil,
		errors.Is(err, nats.ErrTimeout) && ctx.Err() == nil:
		return nil
	case ctx.Err() != nil && len(b.msgs) == 0:
		return ctx.Err()
	case len(b.msgs) > 0:
		return nil
	}
	return v.conn.classify(fmt.Errorf("stream: fetch for view %s: %w", v.view, err))
}

// collect decodes the messages of mb into b; undecodable ones are
// terminated (never redelivered) and logged.
func (v *ViewConsumer) collect(b *Batch, mb jetstream.MessageBatch) {
	for msg := range mb.Messages() {
		cs, err := DecodeChangeSet(msg.Data())
		if err == nil && cs.Source != v.source {
			err = fmt.Errorf("change set of source %q on the subject of %q", cs.Source, v.source)
		}
		if err != nil {
			v.conn.log.Warn("dropping a bad change set", "view", v.view, "subject", msg.Subject(), "err", err)
			_ = msg.Term()
			continue
		}
		b.msgs = append(b.msgs, msg)
		b.ChangeSets = append(b.ChangeSets, cs)
	}
}

// Batch is a run of change sets delivered together, oldest first. It must
// be settled with Ack (after the view commit) or Nak; if neither happens
// the server redelivers it after AckWait.
//
// A Batch is owned by one goroutine.
type Batch struct {
	// ChangeSets are the decoded change sets in stream order.
	ChangeSets []*ChangeSet
	conn       *Conn
	msgs       []jetstream.Msg
}

// MaxTo is the newest source version the batch reaches.
func (b *Batch) MaxTo() uint64 {
	var to uint64
	for _, cs := range b.ChangeSets {
		to = max(to, cs.To)
	}
	return to
}

// Redelivered reports whether any change set in the batch was delivered
// before (its earlier delivery was not acked in time, or was nakked).
func (b *Batch) Redelivered() bool {
	for _, m := range b.msgs {
		if md, err := m.Metadata(); err == nil && md.NumDelivered > 1 {
			return true
		}
	}
	return false
}

// Ack acknowledges every change set in the batch and returns once the
// server has confirmed them, so a nil error means they will not be
// redelivered. (One round trip: the consumer applies a client's acks in
// order, so confirming the last confirms them all.) After an error it may
// be called again.
func (b *Batch) Ack(ctx context.Context) error {
	if len(b.msgs) == 0 {
		return nil
	}
	last := len(b.msgs) - 1
	for _, m := range b.msgs[:last] {
		// Already acked: an earlier Ack of this batch got that far (a
		// retry after the confirmation was lost).
		if err := m.Ack(); err != nil && !errors.Is(err, jetstream.ErrMsgAlreadyAckd) {
			return b.conn.classify(fmt.Errorf("stream: ack: %w", err))
		}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.conn.pubWait)
		defer cancel()
	}
	if err := b.msgs[last].DoubleAck(ctx); err != nil {
		return b.conn.classify(fmt.Errorf("stream: ack: %w", err))
	}
	return nil
}

// Nak asks for redelivery of the whole batch after delay (0: as soon as
// the server processes it), for a refresh that failed and should be
// retried. The server applies naks asynchronously, so the change sets may
// come back over more than one Fetch.
func (b *Batch) Nak(ctx context.Context, delay time.Duration) error {
	for _, m := range b.msgs {
		var err error
		if delay > 0 {
			err = m.NakWithDelay(delay)
		} else {
			err = m.Nak()
		}
		if err != nil {
			return b.conn.classify(fmt.Errorf("stream: nak: %w", err))
		}
	}
	return b.conn.classify(b.conn.flush(ctx))
}

// InProgress resets the redelivery timer of every change set in the
// batch; a long refresh calls it more often than AckWait.
func (b *Batch) InProgress(ctx context.Context) error {
	for _, m := range b.msgs {
		if err := m.InProgress(); err != nil {
			return b.conn.classify(fmt.Errorf("stream: in progress: %w", err))
		}
	}
	return b.conn.classify(b.conn.flush(ctx))
}
