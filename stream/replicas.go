package stream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// MaxReplicas is the replication factor mvd asks for on a cluster of at
// least that many nodes: a stream or bucket survives the loss of one node
// (even the JetStream meta leader) with a quorum left.
const MaxReplicas = 3

// JetStream is the connection's JetStream context, for state kept beside
// the streams (key-value buckets: use EnsureKeyValue to create them with
// the right replicas). It reconnects with the Conn.
func (c *Conn) JetStream() jetstream.JetStream { return c.js }

// Replicas is the replication factor for the streams and buckets mvd
// creates: StreamOptions.Replicas when set, else min(MaxReplicas, the
// cluster's size) — 1 on a server that is not in a cluster (the embedded
// one) — so that a cluster of three or more keeps every stream and bucket
// on three nodes.
//
// The cluster's size is what the client knows of it: the servers named in
// the URL plus the client URLs the cluster advertises (the "connect_urls"
// of its INFO, which list every node unless the servers are configured
// with no_advertise), counted by host and port.
func (c *Conn) Replicas(ctx context.Context) (int, error) {
	if c.streams.Replicas > 0 {
		return c.streams.Replicas, nil
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if c.nc.ConnectedClusterName() == "" {
		if !c.nc.IsConnected() {
			return 0, fmt.Errorf("%w: replicas: not connected", ErrUnavailable)
		}
		return 1, nil
	}
	return min(MaxReplicas, clusterSize(c.nc.Servers())), nil
}

// clusterSize counts distinct servers among client URLs, by host and port
// (a loopback name and address count once), at least 1.
func clusterSize(urls []string) int {
	seen := map[string]bool{}
	for _, u := range urls {
		p, err := url.Parse(u)
		if err != nil || p.Host == "" {
			continue
		}
		host, port := p.Hostname(), p.Port()
		if port == "" {
			port = "4222"
		}
		if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || strings.EqualFold(host, "localhost") {
			host = "loopback"
		}
		seen[net.JoinHostPort(host, port)] = true
	}
	return max(1, len(seen))
}

// replicasFor is the replication factor for an existing or new stream or
// bucket: Replicas, but never fewer than it already has when detected (a
// client that learnt of fewer nodes must not shrink it).
func (c *Conn) replicasFor(ctx context.Context, existing int) (int, error) {
	r, err := c.Replicas(ctx)
	if err != nil {
		return 0, err
	}
	if c.streams.Replicas == 0 && existing > r {
		r = existing
	}
	return r, nil
}

// EnsureKeyValue creates the key-value bucket cfg describes, or updates an
// existing one to cfg, with cfg.Replicas set (when zero) as Replicas says,
// and returns it. Name buckets with Subjects.Bucket, so that two databases
// sharing a server keep separate buckets.
func (c *Conn) EnsureKeyValue(ctx context.Context, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	var (
		kv  jetstream.KeyValue
		err error
	)
	for i := range ensureAttempts {
		// As for a stream (ensureStream): a try the server left
		// unanswered is made again.
		kv, err = c.ensureKeyValueOnce(ctx, attemptWait(i), cfg)
		if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			break
		}
	}
	return kv, err
}

// ensureKeyValueOnce is one try of EnsureKeyValue, bounded by
// wait.
func (c *Conn) ensureKeyValueOnce(ctx context.Context, wait time.Duration, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if cfg.Replicas == 0 {
		existing := 0
		if kv, err := c.js.KeyValue(ctx, cfg.Bucket); err == nil {
			if st, err := kv.Status(ctx); err == nil {
				if s, ok := st.(*jetstream.KeyValueBucketStatus); ok {
					existing = s.StreamInfo().Config.Replicas
				}
			}
		} else if !errors.Is(err, jetstream.ErrBucketNotFound) {
			return nil, c.classify(fmt.Errorf("stream: key-value bucket %s: %w", cfg.Bucket, err))
		}
		r, err := c.replicasFor(ctx, existing)
		if err != nil {
			return nil, c.classify(fmt.Errorf("stream: key-value bucket %s: %w", cfg.Bucket, err))
		}
		cfg.Replicas = r
	}
	kv, err := c.js.CreateOrUpdateKeyValue(ctx, cfg)
	if err != nil {
		return nil, c.classify(fmt.Errorf("stream: create or update key-value bucket %s (%d replicas): %w", cfg.Bucket, cfg.Replicas, err))
	}
	return kv, nil
}

// streamReplicas is the replication factor EnsureStreams gives stream
// name: see replicasFor.
func (c *Conn) streamReplicas(ctx context.Context, name string) (int, error) {
	existing := 0
	if s, err := c.js.Stream(ctx, name); err == nil {
		existing = s.CachedInfo().Config.Replicas
	} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return 0, c.classify(fmt.Errorf("stream: stream %s: %w", name, err))
	}
	return c.replicasFor(ctx, existing)
}
