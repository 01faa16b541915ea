package wire

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/message"
)

// TestFeedNakRedelivers: a delivery the owner naks (its refresh failed)
// comes back from the real server after the nak's delay, not before, and
// once acked it does not come back.
func TestFeedNakRedelivers(t *testing.T) {
	cfg := testConfig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := NewBus(cfg, quietLog)
	if _, _, err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	f, err := b.ViewFeed(ctx, "v", "src")
	if err != nil {
		t.Fatal(err)
	}
	cs := &message.ChangeSet{Source: "src", Incarnation: "1.1", From: 3, To: 4, Op: "append", CommittedAt: time.Now(),
		Inserted: roaring64.BitmapOf(7), Updated: roaring64.New(), Deleted: roaring64.New()}
	if err := b.PublishChange(ctx, cs); err != nil {
		t.Fatal(err)
	}
	d, err := f.Fetch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.MaxTo() != 4 {
		t.Fatalf("delivery to %d, want 4", d.MaxTo())
	}
	const delay = 300 * time.Millisecond
	naked := time.Now()
	if err := d.Nak(ctx, delay); err != nil {
		t.Fatal(err)
	}
	again, err := f.Fetch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(naked); waited < delay*9/10 {
		t.Errorf("redelivered after %v, before the nak's delay %v", waited, delay)
	}
	if got, ok := again.Coalesce(3, "1.1"); !ok || got == nil || got.To != 4 || !got.Inserted.Equals(roaring64.BitmapOf(7)) {
		t.Fatalf("redelivery %+v, %v: want the same change set 3..4", got, ok)
	}
	if err := again.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	short, stop := context.WithTimeout(ctx, 2*delay)
	defer stop()
	if d, err := f.Fetch(short); err == nil {
		t.Fatalf("an acked change set came back: to %d", d.MaxTo())
	} else if !errors.Is(err, context.DeadlineExceeded) && short.Err() == nil {
		t.Fatalf("fetch after the ack: %v", err)
	}
}
