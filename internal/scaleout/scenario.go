package scaleout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Issue 23's bounds.
const (
	// FailoverLimit: every view of a killed instance is refreshed past the
	// next source commit within this of the kill.
	FailoverLimit = 5 * time.Second
	// NATSLossRefreshLimit and NATSLossNotifyLimit: after the loss of a
	// NATS node (the meta leader), every view is refreshed past a later
	// source commit within the first and notified within the second.
	NATSLossRefreshLimit = 10 * time.Second
	NATSLossNotifyLimit  = 20 * time.Second
)

// ErrNotCluster is what NATS.KillMetaLeader returns when there is no
// cluster to lose a node of.
var ErrNotCluster = errors.New("not a NATS cluster")

// StartInstances starts n instances (ids i1, i2, …) at once, as a
// deployment does.
func (c *Cluster) StartInstances(ctx context.Context, n int) ([]*Instance, error) {
	first := len(c.Instances())
	out := make([]*Instance, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { out[i], errs[i] = c.StartInstance(ctx, fmt.Sprintf("i%d", first+i+1)) })
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// WarmUp waits until every view is refreshed past a source commit made
// after now: the instances serve every view.
func (c *Cluster) WarmUp(ctx context.Context, w *Writer, limit time.Duration) error {
	t := time.Now()
	next, err := w.NextAfter(ctx, c.Sources, t, limit)
	if err != nil {
		return err
	}
	_, err = c.WaitPast(ctx, c.Views, next, t, limit)
	return err
}

// Failover is what one kill -9 of an instance measured.
type Failover struct {
	Instance string
	// At is when it was killed.
	At time.Time
	// Views are the views it had committed last (its views).
	Views []string
	// Times: per view, kill → refreshed past the first source commit after
	// the kill.
	Times map[string]time.Duration
}

// Max is the slowest view's failover time.
func (f Failover) Max() time.Duration {
	var m time.Duration
	for _, d := range f.Times {
		m = max(m, d)
	}
	return m
}

// KillOwner kills (SIGKILL) the live instance that holds the most view
// leases, and measures how long each of its views takes to be refreshed
// past the next source commit. The error says which views missed
// FailoverLimit.
func (c *Cluster) KillOwner(ctx context.Context, w *Writer) (Failover, error) {
	leases, err := c.Leases(ctx)
	if err != nil {
		return Failover{}, err
	}
	live := c.Live()
	if len(live) < 2 {
		return Failover{}, fmt.Errorf("kill needs 2 live instances, %d run", len(live))
	}
	count := map[string]int{}
	for _, id := range leases {
		count[id]++
	}
	victim := live[0]
	for _, in := range live {
		if count[in.ID] > count[victim.ID] {
			victim = in
		}
	}
	var views []View
	f := Failover{Instance: victim.ID}
	for _, v := range c.Views {
		if leases[v.Name] == victim.ID {
			views = append(views, v)
			f.Views = append(f.Views, v.Name)
		}
	}
	t := time.Now()
	victim.Kill()
	f.At = t
	if len(views) == 0 {
		return f, fmt.Errorf("instance %s owned no view (leases %v)", victim.ID, leases)
	}
	limit := c.cfg.limit(FailoverLimit)
	next, err := w.NextAfter(ctx, c.sourcesOf(views), t, limit)
	if err != nil {
		return f, err
	}
	// Wait past the bound, so that a miss is measured too.
	f.Times, err = c.WaitPast(ctx, views, next, t, 6*limit)
	if err != nil {
		return f, err
	}
	var late []string
	for _, v := range f.Views {
		if f.Times[v] > limit {
			late = append(late, fmt.Sprintf("%s %v", v, f.Times[v].Round(time.Millisecond)))
		}
	}
	if len(late) > 0 {
		return f, fmt.Errorf("views refreshed past the next source commit (%v) later than %v after the kill: %v", next, limit, late)
	}
	return f, nil
}

// NATSLoss is what the loss of the NATS meta leader measured.
type NATSLoss struct {
	Node int
	// At is when the node was killed.
	At time.Time
	// Refreshed and Notified: per view, kill → refreshed past (notified
	// of) the first source commit after the kill.
	Refreshed, Notified map[string]time.Duration
}

// KillMetaLeader kills the JetStream meta leader and checks that every
// view is refreshed past a later source commit within NATSLossRefreshLimit
// and notified within NATSLossNotifyLimit.
func (c *Cluster) KillMetaLeader(ctx context.Context, w *Writer, sub *Subscriber) (NATSLoss, error) {
	var l NATSLoss
	t := time.Now()
	l.At = t
	node, err := c.NATS.KillMetaLeader(ctx)
	if err != nil {
		return l, err
	}
	l.Node = node
	next, err := w.NextAfter(ctx, c.Sources, t, c.cfg.limit(NATSLossRefreshLimit))
	if err != nil {
		return l, err
	}
	var errs []error
	l.Refreshed, err = c.WaitPast(ctx, c.Views, next, t, c.cfg.limit(NATSLossRefreshLimit))
	errs = append(errs, err)
	l.Notified, err = c.WaitNotified(ctx, sub, c.Views, next, t, c.cfg.limit(NATSLossNotifyLimit))
	errs = append(errs, err)
	return l, errors.Join(errs...)
}

// sourcesOf lists the sources of views, once each.
func (c *Cluster) sourcesOf(views []View) []string {
	var out []string
	for _, v := range views {
		if !slices.Contains(out, v.Source) {
			out = append(out, v.Source)
		}
	}
	return out
}

// Percentile returns the p-th percentile (0–100, nearest rank) of ds.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p/100*float64(len(s)) + 0.5)
	i = min(max(i-1, 0), len(s)-1)
	return s[i]
}
