package wire

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/mvd-project/mvd/cluster"
	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/message"
)

var _ daemon.ClusterBus = (*Bus)(nil)

// ClusterBucket creates or binds the bucket of the instances' membership
// and leases, "<PREFIX>_CLUSTER", with as many replicas as the streams (3
// on a cluster).
func (b *Bus) ClusterBucket(ctx context.Context, ttl time.Duration) (jetstream.KeyValue, error) {
	if b.conn == nil {
		return nil, errNotStarted
	}
	return b.conn.EnsureKeyValue(ctx, cluster.BucketConfig(b.conn.Subjects().Bucket(cluster.BucketSuffix), ttl))
}

// LastChangeSet is the newest change set of source the change-set stream
// keeps (nil: none).
func (b *Bus) LastChangeSet(ctx context.Context, source string) (*message.ChangeSet, error) {
	if b.conn == nil {
		return nil, errNotStarted
	}
	subj := b.conn.Subjects()
	subject, err := subj.ChangeSets(source)
	if err != nil {
		return nil, err
	}
	st, err := b.conn.JetStream().Stream(ctx, subj.ChangeSetStream())
	if err != nil {
		return nil, fmt.Errorf("last change set of %s: %w", source, err)
	}
	msg, err := st.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("last change set of %s: %w", source, err)
	}
	cs, err := message.DecodeChangeSet(msg.Data)
	if err != nil {
		return nil, fmt.Errorf("last change set of %s (sequence %d): %w", source, msg.Sequence, err)
	}
	return cs, nil
}
