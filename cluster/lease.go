package cluster

import (
	"context"
	"errors"
	"sort"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/sourcegraph/conc/pool"
)

// rebalance releases the leases this instance should not hold (name gone,
// or another live member preferred for a while) and tries to take those
// it is preferred for. It reports whether the held set changed.
func (c *Cluster) rebalance(ctx context.Context, now time.Time) bool {
	c.mu.Lock()
	live := c.liveLocked(now)
	var release []leaseID
	releaseRev := map[leaseID]uint64{}
	for id, h := range c.held {
		if !c.wanted[id.kind][id.name] {
			release = append(release, id)
			releaseRev[id] = h.rev
			continue
		}
		pref := Preferred(live, id.kind, id.name)
		if pref != c.self.ID && pref != "" && now.Sub(c.members[pref].first) >= c.handoffAfter() {
			release = append(release, id)
			releaseRev[id] = h.rev
		}
	}
	var take []leaseID
	if c.memberHeld {
		for kind, names := range c.wanted {
			for name := range names {
				id := leaseID{kind, name}
				if _, ok := c.held[id]; !ok && Preferred(live, kind, name) == c.self.ID {
					take = append(take, id)
				}
			}
		}
	}
	// Released names leave the held set before the delete: from now on
	// this instance does not act on them.
	for _, id := range release {
		delete(c.held, id)
	}
	c.mu.Unlock()
	sort.Slice(take, func(i, j int) bool { return take[i].name < take[j].name })
	var took atomic.Bool
	p := pool.New().WithMaxGoroutines(maxParallelOps)
	for _, id := range release {
		p.Go(func() { c.release(ctx, id, releaseRev[id]) })
	}
	for _, id := range take {
		p.Go(func() {
			if c.take(ctx, id, now) {
				took.Store(true)
			}
		})
	}
	p.Wait()
	return len(release) > 0 || took.Load()
}

// release deletes a lease at the revision this instance wrote last (a
// lease that lapsed and was taken meanwhile is not touched).
func (c *Cluster) release(ctx context.Context, id leaseID, rev uint64) {
	octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opTimeout())
	defer cancel()
	c.released.Add(1)
	if err := c.kv.Delete(octx, leaseKey(id.kind, id.name), jetstream.LastRevision(rev)); err != nil && !lostKey(err) {
		c.log.Debug("release lease (it lapses by itself)", "kind", string(id.kind), "name", id.name, "err", err)
	}
}

// take tries to create a lease; it reports whether it did.
func (c *Cluster) take(ctx context.Context, id leaseID, now time.Time) bool {
	octx, cancel := context.WithTimeout(ctx, c.opTimeout())
	defer cancel()
	rev, err := c.kv.Create(octx, leaseKey(id.kind, id.name), c.leaseValue(now))
	if err != nil {
		if !errors.Is(err, jetstream.ErrKeyExists) {
			c.log.Debug("take lease", "kind", string(id.kind), "name", id.name, "err", err)
		}
		return false
	}
	c.mu.Lock()
	keep := c.wanted[id.kind][id.name] && c.memberHeld
	if keep {
		c.held[id] = heldLease{rev: rev, renewed: now, since: now}
		c.acquired.Add(1)
	}
	c.mu.Unlock()
	if !keep {
		// Dropped meanwhile: give it back at once.
		c.release(ctx, id, rev)
	}
	return keep
}

// leave releases every lease and deletes the member key (Run's end).
func (c *Cluster) leave() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*c.opTimeout())
	defer cancel()
	c.mu.Lock()
	held := c.held
	c.held = map[leaseID]heldLease{}
	c.mu.Unlock()
	p := pool.New().WithMaxGoroutines(maxParallelOps)
	for id, h := range held {
		p.Go(func() { c.release(ctx, id, h.rev) })
	}
	p.Wait()
	if c.memberHeld {
		if err := c.kv.Delete(ctx, memberKey(c.self.ID), jetstream.LastRevision(c.memberRev)); err != nil && !lostKey(err) {
			c.log.Debug("delete member key (it lapses by itself)", "err", err)
		}
		c.memberHeld = false
	}
}
