package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Default lease timing: a killed instance's leases lapse within
// DefaultTTL of its last renewal, which it makes every DefaultRenew; the
// others take its views within a check interval (DefaultRenew/4) of that.
const (
	DefaultTTL   = 3 * time.Second
	DefaultRenew = time.Second
)

// ErrDuplicateID is wrapped by Join's error when a live instance already
// has the id (a *DuplicateError names it).
var ErrDuplicateID = errors.New("cluster: instance id in use")

// DuplicateError is Join's refusal: Other is the live instance with the
// same id.
type DuplicateError struct{ Other Member }

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("%v: %s is live (give this instance another --instance-id, or stop that one)", ErrDuplicateID, e.Other)
}

// Unwrap makes errors.Is(err, ErrDuplicateID) hold.
func (e *DuplicateError) Unwrap() error { return ErrDuplicateID }

// Options configure a Cluster.
type Options struct {
	// KV is the bucket (BucketConfig). Required.
	KV jetstream.KeyValue
	// Self describes this instance; Self.ID is required (Nonce is set by
	// Join).
	Self Member
	// TTL is the bucket's TTL (DefaultTTL if zero); Renew how often keys
	// are rewritten (DefaultRenew if zero; below TTL/2).
	TTL, Renew time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// OnChange, if set, is called from Run's goroutine whenever the set
	// of leases held changed (taken, lost or released).
	OnChange func()
}

// Cluster is this instance's membership and leases.
type Cluster struct {
	kv                jetstream.KeyValue
	self              Member
	ttl, renew, check time.Duration
	log               *slog.Logger
	onChange          func()
	kick              chan struct{}

	// The member key: Run's goroutine only (and Join before it).
	memberRev  uint64
	memberAt   time.Time
	memberHeld bool

	mu       sync.Mutex
	selfSeen time.Time // this instance's last heartbeat seen on the watch
	wanted   map[Kind]map[string]bool
	held     map[leaseID]heldLease
	members  map[string]seenMember

	acquired, lost, released atomic.Uint64
}

type leaseID struct {
	kind Kind
	name string
}

type heldLease struct {
	rev            uint64
	renewed, since time.Time
}

type seenMember struct {
	m           Member
	first, last time.Time // first and last heartbeat seen
	rev         uint64    // revision of the last heartbeat
}

// Join registers this instance (Create of its member key) and returns
// its Cluster; Run must follow. If the key exists, Join watches it for up
// to TTL+Renew: renewed, it belongs to a live instance and Join fails with
// a *DuplicateError; lapsed (a previous run of this instance, killed), it
// is taken.
func Join(ctx context.Context, o Options) (*Cluster, error) {
	if o.KV == nil || o.Self.ID == "" {
		return nil, errors.New("cluster: Join needs a bucket and an instance id")
	}
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.Renew <= 0 {
		o.Renew = DefaultRenew
	}
	if o.Renew > o.TTL/2 {
		return nil, fmt.Errorf("cluster: renew period %v must be at most half the TTL %v", o.Renew, o.TTL)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	o.Self.Nonce = hex.EncodeToString(nonce[:])
	c := &Cluster{
		kv: o.KV, self: o.Self, ttl: o.TTL, renew: o.Renew, check: o.Renew / 4, log: o.Logger, onChange: o.OnChange,
		kick:   make(chan struct{}, 1),
		wanted: map[Kind]map[string]bool{}, held: map[leaseID]heldLease{}, members: map[string]seenMember{},
	}
	if err := c.join(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// join takes the member key (see Join).
func (c *Cluster) join(ctx context.Context) error {
	key := memberKey(c.self.ID)
	val, err := json.Marshal(c.self)
	if err != nil {
		return err
	}
	var first jetstream.KeyValueEntry
	var firstAt time.Time
	for {
		rev, err := c.kv.Create(ctx, key, val)
		if err == nil {
			c.memberRev, c.memberAt, c.memberHeld = rev, time.Now(), true
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("cluster: join as %s: %w", c.self.ID, err)
		}
		e, err := c.kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			continue // lapsed meanwhile
		}
		if err != nil {
			return fmt.Errorf("cluster: join as %s: read member key: %w", c.self.ID, err)
		}
		var other Member
		_ = json.Unmarshal(e.Value(), &other)
		switch {
		case first == nil:
			first, firstAt = e, time.Now()
			c.log.Info("instance id already registered; waiting to see whether its holder is live", "instance", c.self.ID, "holder", other.String())
		case e.Revision() != first.Revision():
			return &DuplicateError{Other: other}
		}
		if time.Since(firstAt) > 2*c.ttl {
			// Neither renewed nor lapsed: the bucket TTL should have
			// removed it; refusing is the safe side.
			return &DuplicateError{Other: other}
		}
		if err := sleep(ctx, c.check); err != nil {
			return fmt.Errorf("cluster: join as %s: %w", c.self.ID, err)
		}
	}
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Self is this instance, as registered.
func (c *Cluster) Self() Member { return c.self }

// SetWanted sets the names of kind this instance may hold (every view,
// every source of a view: each instance offers all it knows of, and holds
// those it is preferred for). A name dropped from the set is released.
func (c *Cluster) SetWanted(kind Kind, names []string) {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	c.mu.Lock()
	c.wanted[kind] = set
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Holds reports whether this instance holds the lease of (kind, name).
func (c *Cluster) Holds(kind Kind, name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.held[leaseID{kind, name}]
	return ok
}

// Held lists the names of kind whose lease this instance holds, sorted.
func (c *Cluster) Held(kind Kind) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	set := map[string]bool{}
	for id := range c.held {
		if id.kind == kind {
			set[id.name] = true
		}
	}
	return sortedKeys(set)
}

// Members lists the live members as this instance sees them, by id.
func (c *Cluster) Members() []Member {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Member, 0, len(c.members)+1)
	for _, id := range c.liveLocked(time.Now()) {
		if id == c.self.ID {
			out = append(out, c.self)
		} else {
			out = append(out, c.members[id].m)
		}
	}
	return out
}

// Stats counts lease changes since Join: leases taken, lost (found lapsed
// or taken at renewal) and released (handed off, or their name gone).
func (c *Cluster) Stats() (acquired, lost, released uint64) {
	return c.acquired.Load(), c.lost.Load(), c.released.Load()
}
