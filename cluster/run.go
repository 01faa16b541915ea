package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/sourcegraph/conc/pool"
)

// handoffAfter is how long a preferred member must have been live before
// a holder hands it a name: long enough for it to be taking names (it
// tries every check interval), so the name is not left without an owner
// for a member that is only passing through.
func (c *Cluster) handoffAfter() time.Duration { return 2 * c.renew }

// opTimeout bounds one KV operation.
func (c *Cluster) opTimeout() time.Duration { return c.renew }

// maxParallelOps bounds the KV operations of one check in flight at once.
const maxParallelOps = 16

// Run keeps the membership and the leases until ctx is done: it rewrites
// the member key and the leases held every Renew, watches the other
// members' keys, takes the names it is preferred for and hands off those
// it no longer is. Once ctx is done it releases every lease and deletes
// its member key (so the others take its names at once), and returns
// (a membership watch that fails, NATS being away, is retried every
// check interval).
func (c *Cluster) Run(ctx context.Context) {
	defer c.leave()
	var w jetstream.KeyWatcher
	var updates <-chan jetstream.KeyValueEntry
	synced := false
	watch := func() {
		// The watch lives as long as its context: Run's.
		var err error
		if w, err = c.kv.Watch(ctx, memberPrefix+">"); err != nil {
			c.log.Debug("watch members; retrying", "err", err)
			w, updates = nil, nil
			return
		}
		updates = w.Updates()
		c.mu.Lock()
		c.selfSeen = time.Now() // give the new watch its time
		c.mu.Unlock()
	}
	watch()
	defer func() {
		if w != nil {
			_ = w.Stop()
		}
	}()
	t := time.NewTicker(c.check)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-updates:
			if !ok {
				w, updates = nil, nil
				continue
			}
			if e == nil {
				synced = true // the members at the start are known
			} else if !c.seeMember(e) {
				continue // a heartbeat: nothing changed
			}
		case <-c.kick:
		case <-t.C:
			if w != nil && c.watchStale(time.Now()) {
				// This instance's own heartbeats, written, have not come
				// back on the watch for a TTL: its consumer is stuck (after
				// a server restart it may take many seconds to recover),
				// and every other member would soon look gone.
				c.log.Debug("membership watch stale; watching again")
				_ = w.Stop()
				w, updates = nil, nil
			}
			if w == nil {
				watch()
			}
		}
		if synced {
			c.evaluate(ctx)
		}
	}
}

// seeMember records a member key's update; it reports whether membership
// changed (a member appeared or left).
func (c *Cluster) seeMember(e jetstream.KeyValueEntry) bool {
	var m Member
	if e.Operation() == jetstream.KeyValuePut {
		if err := json.Unmarshal(e.Value(), &m); err != nil || m.ID == "" {
			return false
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if e.Operation() != jetstream.KeyValuePut {
		for id, s := range c.members {
			if memberKey(id) == e.Key() && id != c.self.ID {
				delete(c.members, id)
				_ = s
				return true
			}
		}
		return false
	}
	if m.ID == c.self.ID {
		if m.Nonce == c.self.Nonce {
			c.selfSeen = now
		}
		return false
	}
	s, ok := c.members[m.ID]
	if ok && e.Revision() <= s.rev {
		// Delivered again (the watch's consumer was recreated): not a
		// heartbeat.
		return false
	}
	if !ok || s.m.Nonce != m.Nonce {
		s.first = now
	}
	s.m, s.last, s.rev = m, now, e.Revision()
	c.members[m.ID] = s
	return !ok
}

// watchStale reports whether the membership watch has not delivered this
// instance's own heartbeat for a TTL while its writes succeed (Run's
// goroutine).
func (c *Cluster) watchStale(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.memberHeld && now.Sub(c.memberAt) < 2*c.renew && now.Sub(c.selfSeen) > c.ttl
}

// liveLocked lists the live members' ids (c.mu held), this one among them
// while it holds its member key; it forgets members unheard of for TTL
// while the watch delivers this instance's own heartbeats.
func (c *Cluster) liveLocked(now time.Time) []string {
	ids := make([]string, 0, len(c.members)+1)
	// While this instance's own heartbeats do not come back on the watch
	// (NATS electing a leader, reconnecting), the others' silence says
	// nothing of them: nobody is declared gone.
	watching := now.Sub(c.selfSeen) <= c.ttl
	for id, s := range c.members {
		if watching && now.Sub(s.last) > c.ttl {
			delete(c.members, id)
			continue
		}
		ids = append(ids, id)
	}
	if c.memberHeld {
		ids = append(ids, c.self.ID)
	}
	return ids
}

// evaluate is one check: heartbeat, renewals, hand-offs and takes.
func (c *Cluster) evaluate(ctx context.Context) {
	now := time.Now()
	changed := c.heartbeat(ctx, now)
	changed = c.renewAll(ctx, now) || changed
	changed = c.rebalance(ctx, now) || changed
	if changed && c.onChange != nil {
		c.onChange()
	}
}

// heartbeat rewrites the member key once Renew has passed. It reports
// whether leases were dropped (the key was lost to another run with this
// id). Every KV step has a timeout of its own, and only a read of the key
// naming another run is such a loss: a step without an answer is tried
// again at the next check.
func (c *Cluster) heartbeat(ctx context.Context, now time.Time) bool {
	if c.memberHeld && now.Sub(c.memberAt) < c.renew {
		return false
	}
	key := memberKey(c.self.ID)
	val, _ := json.Marshal(c.self)
	ours := func(v []byte) bool {
		var m Member
		return json.Unmarshal(v, &m) == nil && m.Nonce == c.self.Nonce
	}
	if c.memberHeld {
		rev, err := c.kvStep(ctx, func(octx context.Context) (uint64, error) { return c.kv.Update(octx, key, val, c.memberRev) })
		if err == nil {
			c.memberRev, c.memberAt = rev, now
			return false
		}
		if !lostKey(err) {
			c.log.Debug("renew member key; keeping the leases meanwhile", "err", err)
			return false
		}
		rev, mine, err := c.ownWrite(ctx, key, ours)
		if mine {
			c.memberRev, c.memberAt = rev, now
			return false
		}
		if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) && !errors.Is(err, jetstream.ErrKeyDeleted) {
			return false // no answer: tried again at the next check
		}
		c.log.Warn("member key lapsed (this instance was stalled or cut off); joining again", "instance", c.self.ID)
	}
	rev, err := c.kvStep(ctx, func(octx context.Context) (uint64, error) { return c.kv.Create(octx, key, val) })
	if err == nil {
		c.memberRev, c.memberAt, c.memberHeld = rev, now, true
		return false
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return false // NATS away or slow: tried again at the next check
	}
	rev, mine, err := c.ownWrite(ctx, key, ours)
	if mine {
		c.memberRev, c.memberAt, c.memberHeld = rev, now, true
		return false
	}
	if err != nil {
		return false // no answer, or lapsed meanwhile: tried again at the next check
	}
	c.memberHeld = false
	c.log.Error("another live instance took this instance id; holding no view until it is free", "instance", c.self.ID)
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.held)
	c.lost.Add(uint64(n))
	clear(c.held)
	return n > 0
}

// kvStep runs one KV write with a timeout of its own.
func (c *Cluster) kvStep(ctx context.Context, f func(context.Context) (uint64, error)) (uint64, error) {
	octx, cancel := context.WithTimeout(ctx, c.opTimeout())
	defer cancel()
	return f(octx)
}

// ownWrite reads key (with a timeout of its own) after a write at a
// revision that failed: when the value there is this instance's (mine),
// its own last write landed and only its acknowledgement was lost (a NATS
// node or leader lost under it, or a busy JetStream), and the revision to
// write at next is returned. err is the read's error (nil when the key
// was read, whoever's it is).
func (c *Cluster) ownWrite(ctx context.Context, key string, mine func([]byte) bool) (rev uint64, ok bool, err error) {
	octx, cancel := context.WithTimeout(ctx, c.opTimeout())
	defer cancel()
	e, err := c.kv.Get(octx, key)
	if err != nil {
		return 0, false, err
	}
	if !mine(e.Value()) {
		return 0, false, nil
	}
	return e.Revision(), true, nil
}

// lostKey reports whether a KV write failed because the key is not at
// the revision written last (lapsed, or taken): the write will never
// succeed. Anything else (timeouts, NATS away) may.
func lostKey(err error) bool {
	return errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyNotFound) ||
		errors.Is(err, jetstream.ErrKeyDeleted) || errors.Is(err, jetstream.ErrKeyExists)
}

// renewAll renews the leases due, in parallel; it reports whether one
// was lost.
func (c *Cluster) renewAll(ctx context.Context, now time.Time) bool {
	c.mu.Lock()
	due := map[leaseID]heldLease{}
	for id, h := range c.held {
		if now.Sub(h.renewed) >= c.renew {
			due[id] = h
		}
	}
	c.mu.Unlock()
	if len(due) == 0 {
		return false
	}
	var lostAny atomic.Bool
	p := pool.New().WithMaxGoroutines(maxParallelOps)
	for id, h := range due {
		p.Go(func() {
			next, res, err := c.renewLease(ctx, id, h, now)
			c.mu.Lock()
			defer c.mu.Unlock()
			cur, ok := c.held[id]
			if !ok || cur.rev != h.rev {
				return
			}
			switch res {
			case renewOK:
				c.held[id] = next
			case renewLost:
				delete(c.held, id)
				c.lost.Add(1)
				lostAny.Store(true)
				c.log.Warn("lease lost (lapsed or taken)", "kind", string(id.kind), "name", id.name)
			default:
				c.log.Debug("renew lease; keeping it meanwhile", "kind", string(id.kind), "name", id.name, "err", err)
			}
		})
	}
	p.Wait()
	return lostAny.Load()
}

// renewResult is what one renewal learnt of a lease.
type renewResult int

const (
	// renewUnknown: no answer (NATS slow or away): the lease is kept and
	// tried again at the next check.
	renewUnknown renewResult = iota
	// renewOK: the lease is this instance's, at the revision returned.
	renewOK
	// renewLost: NATS said another holds the lease.
	renewLost
)

// renewLease renews one lease: an Update at the revision last written.
// Refused (the key is not at that revision), the lease is read to learn
// why — every step with a timeout of its own, as a busy JetStream (R3
// consumers being created by the hundred) answers slowly: its own
// renewal that landed unacknowledged (go on from there), lapsed and free
// (taken again), or another's (lost). Only an answer that names another
// holder is a loss; a step without an answer leaves the lease as it was
// (renewUnknown), settled by the next check.
func (c *Cluster) renewLease(ctx context.Context, id leaseID, h heldLease, now time.Time) (heldLease, renewResult, error) {
	key := leaseKey(id.kind, id.name)
	rev, err := c.kvStep(ctx, func(octx context.Context) (uint64, error) {
		return c.kv.Update(octx, key, c.leaseValue(h.since), h.rev)
	})
	if err == nil {
		return heldLease{rev: rev, renewed: now, since: h.since}, renewOK, nil
	}
	if !lostKey(err) {
		return h, renewUnknown, err
	}
	if r, mine, gerr := c.ownWrite(ctx, key, func(v []byte) bool { return c.ownLease(v, h.since) }); mine {
		// Its own renewal landed, unacknowledged: go on from that
		// revision (renewed again at the next check).
		return heldLease{rev: r, renewed: h.renewed, since: h.since}, renewOK, nil
	} else if gerr == nil {
		return h, renewLost, err // read: another's
	} else if !errors.Is(gerr, jetstream.ErrKeyNotFound) && !errors.Is(gerr, jetstream.ErrKeyDeleted) {
		return h, renewUnknown, gerr
	}
	// It lapsed (NATS lost its stream leader for longer than the TTL):
	// taken again at once if nobody took it, the owner going on.
	rev, cerr := c.kvStep(ctx, func(octx context.Context) (uint64, error) { return c.kv.Create(octx, key, c.leaseValue(h.since)) })
	if cerr == nil {
		return heldLease{rev: rev, renewed: now, since: h.since}, renewOK, nil
	}
	// Refused, it exists after all (taken meanwhile, or the read came
	// from a replica behind): the next check reads whose it is.
	return h, renewUnknown, cerr
}

// ownLease reports whether v is a lease value this instance wrote for a
// lease taken at since.
func (c *Cluster) ownLease(v []byte, since time.Time) bool {
	var l Lease
	return json.Unmarshal(v, &l) == nil && l.Holder == c.self.ID && l.Since.Equal(since)
}

// leaseValue is the value this instance writes in its leases.
func (c *Cluster) leaseValue(since time.Time) []byte {
	b, _ := json.Marshal(Lease{Holder: c.self.ID, Since: since.UTC()})
	return b
}
