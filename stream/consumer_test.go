package stream

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// setup starts a server, connects in-process and creates the streams.
func setup(t *testing.T) (*Server, *Conn) {
	t.Helper()
	s := startServer(t, ServerConfig{})
	c := connect(t, s.ConnectOptions())
	if err := c.EnsureStreams(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	return s, c
}

func publishSteps(t *testing.T, c *Conn, from, to uint64) {
	t.Helper()
	for v := from; v < to; v++ {
		if _, err := c.PublishChangeSet(testCtx(t), step(v, []uint64{v * 10}, nil, nil)); err != nil {
			t.Fatal(err)
		}
	}
}

// waitReady waits until the consumer has counted n undelivered change
// sets: the server tells a consumer about stored messages asynchronously,
// and Fetch takes what the consumer has ready.
func waitReady(t *testing.T, vc *ViewConsumer, n uint64) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d change sets ready", n), 5*time.Second, func() bool {
		info, err := vc.cons.Info(testCtx(t))
		return err == nil && info.NumPending >= n
	})
}

// fetchN fetches until n change sets have arrived (naks and redeliveries
// are applied asynchronously, so they may come in several batches).
func fetchN(t *testing.T, vc *ViewConsumer, n int) []*Batch {
	t.Helper()
	var out []*Batch
	for got := 0; got < n; {
		b, err := vc.Fetch(testCtx(t), n-got)
		if err != nil {
			t.Fatalf("fetch %d more: %v", n-got, err)
		}
		out = append(out, b)
		got += len(b.ChangeSets)
	}
	return out
}

// expectNothing checks that no change set arrives within d.
func expectNothing(t *testing.T, vc *ViewConsumer, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(testCtx(t), d)
	defer cancel()
	if b, err := vc.Fetch(ctx, 10); err == nil {
		t.Fatalf("unexpected delivery of %d change sets (first %d..%d)", len(b.ChangeSets), b.ChangeSets[0].From, b.ChangeSets[0].To)
	} else if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("fetch: %v", err)
	}
}

func TestConsumerCoalescesBacklog(t *testing.T) {
	_, c := setup(t)
	ctx := testCtx(t)
	vc, err := c.ViewConsumer(ctx, "v", "events", ConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	// Another source's change sets never reach this view.
	other := step(1, []uint64{1}, nil, nil)
	other.Source = "other"
	if _, err := c.PublishChangeSet(ctx, other); err != nil {
		t.Fatal(err)
	}
	publishSteps(t, c, 1, 8) // 1..2, ..., 7..8
	waitReady(t, vc, 7)
	b, err := vc.Fetch(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.ChangeSets) != 5 || b.ChangeSets[0].From != 1 || b.MaxTo() != 6 {
		t.Fatalf("first batch: %d change sets up to %d, want 5 up to 6", len(b.ChangeSets), b.MaxTo())
	}
	cs, ok := b.Coalesce(1, "inc1")
	if !ok || cs == nil || cs.From != 1 || cs.To != 6 || cs.Op != OpMultiple || cs.Inserted.GetCardinality() != 5 {
		t.Fatalf("coalesced: %+v ok=%v", cs, ok)
	}
	// A context without a deadline is fine (nats.go's flush needs one).
	if err := b.Ack(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, err = vc.Fetch(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.ChangeSets) != 2 || b.ChangeSets[0].From != 6 || b.MaxTo() != 8 {
		info, _ := vc.cons.Info(ctx)
		md, _ := b.msgs[0].Metadata()
		t.Fatalf("second batch: %d change sets up to %d, want 6..8 (consumer: pending %d, ack pending %d, waiting %d, redelivered %d; first msg pending %d)",
			len(b.ChangeSets), b.MaxTo(), info.NumPending, info.NumAckPending, info.NumWaiting, info.NumRedelivered, md.NumPending)
	}
	if err := b.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	expectNothing(t, vc, 200*time.Millisecond)
}

func TestConsumerRedelivers(t *testing.T) {
	_, c := setup(t)
	ctx := testCtx(t)
	vc, err := c.ViewConsumer(ctx, "v", "events", ConsumerConfig{AckWait: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	publishSteps(t, c, 1, 3)
	waitReady(t, vc, 2)
	b, err := vc.Fetch(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.ChangeSets) != 2 || b.Redelivered() {
		t.Fatalf("first delivery: %d change sets, redelivered=%v", len(b.ChangeSets), b.Redelivered())
	}
	// A failed refresh naks: the same change sets come back at once.
	if err := b.Nak(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for _, b := range fetchN(t, vc, 2) {
		if !b.Redelivered() {
			t.Fatalf("after nak: change sets from %d not marked redelivered", b.ChangeSets[0].From)
		}
	}
	// A crash between commit and ack: nothing settles, AckWait passes, the
	// server redelivers, and Coalesce at the committed watermark finds
	// nothing left to do.
	for _, b := range fetchN(t, vc, 2) {
		if !b.Redelivered() || b.MaxTo() > 3 {
			t.Fatalf("after AckWait: redelivered=%v to=%d", b.Redelivered(), b.MaxTo())
		}
		if cs, ok := b.Coalesce(3, "inc1"); cs != nil || !ok {
			t.Fatalf("redelivery below the watermark coalesced to %+v, %v", cs, ok)
		}
		if err := b.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
	expectNothing(t, vc, 500*time.Millisecond)

	// The consumer is durable: binding it again resumes after the acks.
	vc2, err := c.ViewConsumer(ctx, "v", "events", ConsumerConfig{AckWait: 300 * time.Millisecond, DeliverAll: true})
	if err != nil {
		t.Fatal(err)
	}
	publishSteps(t, c, 3, 4)
	b, err = vc2.Fetch(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.ChangeSets) != 1 || b.ChangeSets[0].From != 3 {
		t.Fatalf("rebound consumer got %d change sets from %d, want 3..4 only", len(b.ChangeSets), b.ChangeSets[0].From)
	}
	_ = b.Ack(ctx)
	if err := c.DeleteViewConsumer(ctx, "v"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteViewConsumer(ctx, "v"); err != nil {
		t.Fatalf("deleting a missing consumer: %v", err)
	}
}

func TestConsumerMaxAckPending(t *testing.T) {
	_, c := setup(t)
	ctx := testCtx(t)
	vc, err := c.ViewConsumer(ctx, "v", "events", ConsumerConfig{MaxAckPending: 3})
	if err != nil {
		t.Fatal(err)
	}
	publishSteps(t, c, 1, 6)
	waitReady(t, vc, 5)
	b, err := vc.Fetch(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.ChangeSets) != 3 {
		t.Fatalf("with 3 pending allowed, got %d", len(b.ChangeSets))
	}
	expectNothing(t, vc, 200*time.Millisecond)
	if err := b.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	if b, err = vc.Fetch(ctx, 100); err != nil || len(b.ChangeSets) != 2 {
		t.Fatalf("after ack: %v change sets, %v", b, err)
	}
}

func TestConsumerDropsBadMessages(t *testing.T) {
	_, c := setup(t)
	ctx := testCtx(t)
	vc, err := c.ViewConsumer(ctx, "v", "events", ConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	subject, _ := c.subj.ChangeSets("events")
	if _, err := c.js.Publish(ctx, subject, []byte(`{"schema":2}`)); err != nil {
		t.Fatal(err)
	}
	publishSteps(t, c, 1, 2)
	b, err := vc.Fetch(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.ChangeSets) != 1 || b.ChangeSets[0].From != 1 {
		t.Fatalf("got %d change sets", len(b.ChangeSets))
	}
	_ = b.Ack(ctx)
	expectNothing(t, vc, 200*time.Millisecond)
}

func TestFetchHonoursContext(t *testing.T) {
	_, c := setup(t)
	vc, err := c.ViewConsumer(testCtx(t), "v", "events", ConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	start := time.Now()
	if _, err := vc.Fetch(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("fetch after cancel: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("cancel took %v to end a fetch", d)
	}
}

// Two daemons binding the same view's consumer share its change sets: each
// is delivered to one of them, none to both (while acked in time).
func TestConsumerSharedByTwoProcesses(t *testing.T) {
	s, c1 := setup(t)
	c2 := connect(t, tcpOptions(s))
	ctx := testCtx(t)
	vc1, err := c1.ViewConsumer(ctx, "v", "events", ConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	vc2, err := c2.ViewConsumer(ctx, "v", "events", ConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if vc1.Name() != vc2.Name() {
		t.Fatalf("consumer names %q and %q", vc1.Name(), vc2.Name())
	}
	const n = 40
	publishSteps(t, c1, 1, n+1)
	seen := map[uint64]int{}
	for len(seen) < n {
		for _, vc := range []*ViewConsumer{vc1, vc2} {
			short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			b, err := vc.Fetch(short, 7)
			cancel()
			if errors.Is(err, context.DeadlineExceeded) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, cs := range b.ChangeSets {
				seen[cs.From]++
			}
			if err := b.Ack(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("only %d of %d change sets delivered", len(seen), n)
		}
	}
	for from, times := range seen {
		if times != 1 {
			t.Fatalf("change set %d..%d delivered %d times", from, from+1, times)
		}
	}
	expectNothing(t, vc1, 100*time.Millisecond)
}
