package stream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

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
// with no_advertise), counted by host and port. That can fall short: a
// client connected to one node of a cluster still forming its routes
// learns of the others later. So EnsureStreams and EnsureKeyValue ask for
// MaxReplicas on any cluster and step down only when the cluster refuses
// the placement (placementRefused).
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

// replicasFor is the replication factor to ask for an existing or new
// stream or bucket: StreamOptions.Replicas when set; 1 off a cluster;
// else MaxReplicas, which the create steps down from while the cluster
// refuses it (createReplicated), never below what the stream already
// has.
func (c *Conn) replicasFor(ctx context.Context, existing int) (int, error) {
	if c.streams.Replicas > 0 {
		return c.streams.Replicas, nil
	}
	r, err := c.Replicas(ctx) // 1 off a cluster; an error while disconnected
	if err != nil {
		return 0, err
	}
	if c.nc.ConnectedClusterName() != "" {
		r = MaxReplicas
	}
	return max(r, existing), nil
}

// placementRefused reports a create the cluster refused for want of
// nodes (or room) for its replicas.
func placementRefused(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jsErrNoPeers || apiErr.ErrorCode == jsErrInsufficientResources)
}

// The JetStream API error codes of a refused placement (nats-server's
// JSClusterNoPeersErrF and JSInsufficientResourcesErr).
const (
	jsErrNoPeers               jetstream.ErrorCode = 10005
	jsErrInsufficientResources jetstream.ErrorCode = 10023
)

// createReplicated runs create with replicas r, and again with one
// replica fewer while the cluster refuses the placement and the
// replicas were not configured, down to floor (at least 1: what an
// existing stream has is never shrunk); it returns the replicas used.
func (c *Conn) createReplicated(r, floor int, create func(replicas int) error) (int, error) {
	for {
		err := create(r)
		if err == nil || !placementRefused(err) || c.streams.Replicas > 0 || r <= max(floor, 1) {
			return r, err
		}
		r--
	}
}

// EnsureKeyValue creates the key-value bucket cfg describes, or updates an
// existing one to cfg, with cfg.Replicas set (when zero) as Replicas says,
// and returns it. Name buckets with Subjects.Bucket, so that two databases
// sharing a server keep separate buckets.
func (c *Conn) EnsureKeyValue(ctx context.Context, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	return tryAnswered(ctx, func(ctx context.Context) (jetstream.KeyValue, error) {
		return c.ensureKeyValueOnce(ctx, cfg)
	})
}

// ensureKeyValueOnce is one try of EnsureKeyValue. Replicas cfg sets are
// asked for as they are; unset, as replicasFor says, stepping down.
func (c *Conn) ensureKeyValueOnce(ctx context.Context, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	r, floor := cfg.Replicas, cfg.Replicas
	if cfg.Replicas == 0 {
		var err error
		if r, floor, err = c.bucketReplicas(ctx, cfg.Bucket); err != nil {
			return nil, err
		}
	}
	var kv jetstream.KeyValue
	var err error
	cfg.Replicas, err = c.createReplicated(r, floor, func(n int) error {
		cfg.Replicas = n
		kv, err = c.js.CreateOrUpdateKeyValue(ctx, cfg)
		return err
	})
	if err != nil {
		return nil, c.classify(fmt.Errorf("stream: create or update key-value bucket %s (%d replicas): %w", cfg.Bucket, cfg.Replicas, err))
	}
	return kv, nil
}

// bucketReplicas is the replication factor EnsureKeyValue asks for
// bucket (see replicasFor), and the replicas it has (0: new).
func (c *Conn) bucketReplicas(ctx context.Context, bucket string) (r, existing int, err error) {
	if kv, err := c.js.KeyValue(ctx, bucket); err == nil {
		if st, err := kv.Status(ctx); err == nil {
			if s, ok := st.(*jetstream.KeyValueBucketStatus); ok {
				existing = s.StreamInfo().Config.Replicas
			}
		}
	} else if !errors.Is(err, jetstream.ErrBucketNotFound) {
		return 0, 0, c.classify(fmt.Errorf("stream: key-value bucket %s: %w", bucket, err))
	}
	if r, err = c.replicasFor(ctx, existing); err != nil {
		return 0, 0, c.classify(fmt.Errorf("stream: key-value bucket %s: %w", bucket, err))
	}
	return r, existing, nil
}

// streamReplicas is the replication factor EnsureStreams asks for stream
// name (see replicasFor), and the replicas it has (0: new).
func (c *Conn) streamReplicas(ctx context.Context, name string) (r, existing int, err error) {
	if s, err := c.js.Stream(ctx, name); err == nil {
		existing = s.CachedInfo().Config.Replicas
	} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return 0, 0, c.classify(fmt.Errorf("stream: stream %s: %w", name, err))
	}
	r, err = c.replicasFor(ctx, existing)
	return r, existing, err
}
