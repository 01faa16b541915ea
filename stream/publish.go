package stream

import (
	"context"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// PublishResult describes a published change set.
type PublishResult struct {
	// Sequence is the message's stream sequence.
	Sequence uint64
	// Duplicate says the server already had this Nats-Msg-Id within its
	// duplicate window and dropped the message; it is not an error.
	Duplicate bool
	// IDsOmitted says the row ids did not fit a message and were left
	// out (consumers compute the change set from the source).
	IDsOmitted bool
}

// PublishChangeSet publishes cs on its source's subject with its MsgID as
// Nats-Msg-Id and waits for the stream's acknowledgement.
//
// It never blocks on a lost server for long: while the connection is down
// it fails at once, and otherwise within ctx's deadline (PublishTimeout if
// ctx has none), with an error wrapping ErrUnavailable. Nothing is queued
// for later: the caller keeps going, and republishes the range once
// Connected again if it wants consumers to see it (a republished range
// within the duplicate window is dropped by the server; outside it, it is
// delivered again and consumers skip it by their watermark).
func (c *Conn) PublishChangeSet(ctx context.Context, cs *ChangeSet) (PublishResult, error) {
	subject, err := c.subj.ChangeSets(cs.Source)
	if err != nil {
		return PublishResult{}, err
	}
	id, err := cs.MsgID()
	if err != nil {
		return PublishResult{}, err
	}
	data, err := EncodeChangeSet(cs)
	if err != nil {
		return PublishResult{}, err
	}
	var res PublishResult
	// Headers cost "NATS/1.0\r\nNats-Msg-Id: <id>\r\n\r\n".
	if int64(len(data)+len(id)+40) > c.nc.MaxPayload() {
		slim := *cs
		slim.IDsOmitted = true
		slim.Inserted, slim.Updated, slim.Deleted = nil, nil, nil
		slim.Counts = Counts{Inserted: card(cs.Inserted), Updated: card(cs.Updated), Deleted: card(cs.Deleted)}
		if data, err = EncodeChangeSet(&slim); err != nil {
			return PublishResult{}, err
		}
		res.IDsOmitted = true
	}
	msg := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, id)
	ack, err := c.publish(ctx, msg)
	if err != nil {
		return PublishResult{}, fmt.Errorf("publish change set %s: %w", id, err)
	}
	res.Sequence, res.Duplicate = ack.Sequence, ack.Duplicate
	return res, nil
}

// PublishRefresh publishes a refresh notification on its view's subject
// (with the Nats-Msg-Id RefreshMsgID: published again, it is stored once)
// and waits for the stream's acknowledgement, failing like
// PublishChangeSet when NATS is away. Live subscribers receive it at once;
// the stream keeps the latest StreamOptions.RefreshPerView per view.
func (c *Conn) PublishRefresh(ctx context.Context, n *RefreshNotification) error {
	subject, err := c.subj.Refreshed(n.View)
	if err != nil {
		return err
	}
	data, err := EncodeRefresh(n)
	if err != nil {
		return err
	}
	msg := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, RefreshMsgID(n))
	if _, err := c.publish(ctx, msg); err != nil {
		return fmt.Errorf("publish refresh of view %s: %w", n.View, err)
	}
	return nil
}

// RefreshMsgID is the Nats-Msg-Id of a refresh notification:
// "<view token>:<version>:<committed_at in Unix nanoseconds>", so that a
// notification published again after a publish whose acknowledgement was
// lost (a node of the cluster killed) is stored once.
func RefreshMsgID(n *RefreshNotification) string {
	tok, err := EncodeToken(n.View)
	if err != nil {
		tok = n.View
	}
	return fmt.Sprintf("%s:%d:%d", tok, n.Version, n.CommittedAt.UnixNano())
}

func (c *Conn) publish(ctx context.Context, msg *nats.Msg) (*jetstream.PubAck, error) {
	if !c.nc.IsConnected() {
		return nil, fmt.Errorf("%w: not connected (%s)", ErrUnavailable, c.nc.Status())
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.pubWait)
		defer cancel()
	}
	ack, err := c.js.PublishMsg(ctx, msg)
	return ack, c.classify(err)
}

func card(b *roaring64.Bitmap) uint64 {
	if b == nil {
		return 0
	}
	return b.GetCardinality()
}
