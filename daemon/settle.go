package daemon

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// Bounds of the attempts to settle a delivery whose ack or nak failed
// (NATS away): they stop after the consumer's ack wait, when the server
// redelivers it anyway.
const (
	settleRetryMin = 100 * time.Millisecond
	settleRetryMax = 2 * time.Second
	settleRetryFor = 30 * time.Second
)

// settles is the one way an owner settles deliveries: each on a goroutine
// of its own (the ack's round trip runs beside the notification, not
// before it), retried while NATS is away (an ack names its message, so a
// late one still counts, instead of leaving the change sets to be
// redelivered, and skipped, only after the ack wait), tracked so that Run
// ends them and waits for them before it returns.
type settles struct {
	log     *slog.Logger
	timeout time.Duration

	ctx    context.Context // done once Run's context is: attempts stop
	cancel context.CancelFunc

	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

func (s *settles) init(log *slog.Logger, timeout time.Duration) {
	s.log, s.timeout = log, timeout
	s.ctx, s.cancel = context.WithCancel(context.Background())
}

// ack acks d (nil: nothing to do).
func (s *settles) ack(d *settled) { s.settle(d, true, 0) }

// nak naks d, to be redelivered after delay.
func (s *settles) nak(d *settled, delay time.Duration) { s.settle(d, false, delay) }

func (s *settles) settle(d *settled, ack bool, delay time.Duration) {
	if d == nil || !d.claim() {
		return
	}
	s.mu.Lock()
	if s.closed { // Run has returned: the server redelivers it to whoever binds next
		s.mu.Unlock()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		b := backoff.NewExponentialBackOff()
		b.InitialInterval, b.MaxInterval = settleRetryMin, settleRetryMax
		attempt := func() (struct{}, error) {
			ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
			defer cancel()
			return struct{}{}, d.resolve(ctx, ack, delay)
		}
		if _, err := backoff.Retry(s.ctx, attempt, backoff.WithBackOff(b), backoff.WithMaxElapsedTime(settleRetryFor)); err != nil {
			s.log.Debug("settle change sets (they will be redelivered and skipped)", "ack", ack, "err", err)
		}
	}()
}

// stop makes attempts under way give up after the one in flight.
func (s *settles) stop() { s.cancel() }

// wait waits for every settle under way; later ones are not attempted.
func (s *settles) wait() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.wg.Wait()
}
