package wire

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/stream"
)

// JobsBucket is the name (under the subject prefix: "<PREFIX>_JOBS") of
// the key-value bucket of the refresh jobs' history with --nats-url.
const JobsBucket = "jobs"

// KVJobs keeps the daemon's refresh jobs in a JetStream key-value bucket
// that every instance of the database shares ("<PREFIX>_JOBS", three
// replicas on a cluster of three or more nodes), so that each lists every
// instance's jobs. A job is the key "<instance>.<seq>" ('.' in the
// instance id written '='; seq in 20 digits) and the value a done byte
// (0 or 1) and the job's JSON, as checkpoint keeps it.
//
// It connects (its own connection, with the bus's options) and ensures
// the bucket on first use, and again after a failure. Safe for concurrent
// use; Close closes the connection.
type KVJobs struct {
	opts     stream.ConnectOptions
	instance string

	mu   sync.Mutex
	conn *stream.Conn
	kv   jetstream.KeyValue
}

var _ daemon.SharedJobStore = (*KVJobs)(nil)

// NewKVJobs returns the job store of instance on the NATS o names
// (o.Subjects picks the bucket's prefix); nothing connects until used.
func NewKVJobs(o stream.ConnectOptions, instance string) *KVJobs {
	return &KVJobs{opts: o, instance: instance}
}

// bucket connects and ensures the bucket, once.
func (k *KVJobs) bucket(ctx context.Context) (jetstream.KeyValue, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.kv != nil {
		return k.kv, nil
	}
	if k.conn == nil {
		conn, err := stream.Connect(ctx, k.opts)
		if err != nil {
			return nil, err
		}
		k.conn = conn
	}
	kv, err := k.conn.EnsureKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      k.conn.Subjects().Bucket(JobsBucket),
		Description: "mvd refresh jobs of every instance",
		History:     1,
		Storage:     jetstream.FileStorage,
	})
	if err != nil {
		return nil, err
	}
	k.kv = kv
	return kv, nil
}

// token is the instance's first key token.
func (k *KVJobs) token() string { return strings.ReplaceAll(k.instance, ".", "=") }

func (k *KVJobs) key(seq uint64) string { return fmt.Sprintf("%s.%020d", k.token(), seq) }

// PutJob records a job (and purges the records of drop); the write is
// acknowledged by the bucket's replicas when it returns. The purges are
// separate writes: a failure between them leaves old records, trimmed on
// the next PutJob's drop.
func (k *KVJobs) PutJob(ctx context.Context, r daemon.JobRecord, drop ...uint64) error {
	kv, err := k.bucket(ctx)
	if err != nil {
		return fmt.Errorf("job store: %w", err)
	}
	val := make([]byte, 0, 1+len(r.Value))
	if r.Done {
		val = append(val, 1)
	} else {
		val = append(val, 0)
	}
	if _, err := kv.Put(ctx, k.key(r.Seq), append(val, r.Value...)); err != nil {
		return fmt.Errorf("job store: put job %d: %w", r.Seq, err)
	}
	for _, seq := range drop {
		if err := kv.Purge(ctx, k.key(seq)); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
			return fmt.Errorf("job store: purge job %d: %w", seq, err)
		}
	}
	return nil
}

// Jobs returns this instance's jobs, oldest first.
func (k *KVJobs) Jobs(ctx context.Context) ([]daemon.JobRecord, error) {
	return k.read(ctx, k.token()+".*")
}

// AllJobs returns every instance's jobs (by instance, then oldest first).
func (k *KVJobs) AllJobs(ctx context.Context) ([]daemon.JobRecord, error) {
	return k.read(ctx, ">")
}

// read reads the records whose keys match filter with one watcher (one
// consumer over the bucket, not a request per key).
func (k *KVJobs) read(ctx context.Context, filter string) ([]daemon.JobRecord, error) {
	kv, err := k.bucket(ctx)
	if err != nil {
		return nil, fmt.Errorf("job store: %w", err)
	}
	w, err := kv.WatchFiltered(ctx, []string{filter}, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, fmt.Errorf("job store: read jobs: %w", err)
	}
	defer func() { _ = w.Stop() }()
	type keyed struct {
		key string
		rec daemon.JobRecord
	}
	var got []keyed
	sorted := func() []daemon.JobRecord { // by key: by instance, then seq
		slices.SortFunc(got, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
		out := make([]daemon.JobRecord, len(got))
		for i, g := range got {
			out[i] = g.rec
		}
		return out
	}
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return nil, fmt.Errorf("job store: read jobs: watcher stopped")
			}
			if e == nil { // every value present when the watch began has come
				return sorted(), nil
			}
			rec, err := decodeJobEntry(e.Key(), e.Value())
			if err != nil {
				return nil, fmt.Errorf("job store: %w", err)
			}
			got = append(got, keyed{e.Key(), rec})
		case <-ctx.Done():
			return nil, fmt.Errorf("job store: read jobs: %w", ctx.Err())
		}
	}
}

func decodeJobEntry(key string, v []byte) (daemon.JobRecord, error) {
	dot := strings.LastIndexByte(key, '.')
	seq, err := strconv.ParseUint(key[dot+1:], 10, 64)
	if dot < 0 || err != nil || seq == 0 {
		return daemon.JobRecord{}, fmt.Errorf("job key %q is not <instance>.<seq>", key)
	}
	if len(v) == 0 {
		return daemon.JobRecord{}, fmt.Errorf("job %s: empty entry", key)
	}
	return daemon.JobRecord{Seq: seq, Done: v[0] == 1, Value: v[1:]}, nil
}

// Close closes the store's connection.
func (k *KVJobs) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.conn != nil {
		k.conn.Close()
		k.conn, k.kv = nil, nil
	}
	return nil
}
