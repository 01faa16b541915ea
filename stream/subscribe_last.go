package stream

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// LastRefresh returns the newest notification the refresh stream keeps
// for view, or nil when it keeps none (never notified, aged out, or no
// refresh stream). The daemon compares it with the view's commits at
// start, to publish those a crash kept from being notified.
func (c *Conn) LastRefresh(ctx context.Context, view string) (*RefreshNotification, error) {
	subject, err := c.subj.Refreshed(view)
	if err != nil {
		return nil, err
	}
	st, err := c.js.Stream(ctx, c.subj.RefreshStream())
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, c.classify(fmt.Errorf("stream: last refresh of view %s: %w", view, err))
	}
	msg, err := st.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, c.classify(fmt.Errorf("stream: last refresh of view %s: %w", view, err))
	}
	n, err := DecodeRefresh(msg.Data)
	if err != nil {
		return nil, fmt.Errorf("stream: last refresh of view %s (sequence %d): %w", view, msg.Sequence, err)
	}
	return n, nil
}
