package daemon

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/mvd-project/mvd/message"
)

// retireLocked stops an owner taken out of s.owners (s.mu held) without
// waiting for it: its refresh in flight drains on a goroutine of its own,
// so the other views' wake-ups go on meanwhile. A new owner of the same
// name starts only once it has (retiring), and dropped's feed is
// deleted first.
func (s *Server) retireLocked(h *ownerHandle, dropped bool) {
	h.cancel()
	gone := make(chan struct{})
	prev := s.retiring[h.spec.Name]
	s.retiring[h.spec.Name] = gone
	s.drains.Add(1)
	go func() {
		defer s.drains.Done()
		defer close(gone)
		<-h.done
		if prev != nil {
			<-prev
		}
		s.metrics.ForgetView(h.spec.Name)
		s.log.Info("view gone", "view", h.spec.Name)
		if dropped {
			s.deleteFeed(h.spec.Name)
			s.forgetView(h.spec.Name)
		}
		s.mu.Lock()
		if s.retiring[h.spec.Name] == gone {
			delete(s.retiring, h.spec.Name)
		}
		s.mu.Unlock()
	}()
}

// startOwner starts the owner (and feed) of a view opened as r. It waits,
// on its own goroutine, for a previous owner of the name to be gone.
func (s *Server) startOwner(hard context.Context, sp ViewSpec, r Refresher) {
	source := sp.Source
	cfg := ownerConfig{
		View: sp.Name, Refresher: r, Policy: sp.Policy, CatchUp: true,
		Reopen:      func(ctx context.Context) (Refresher, error) { return s.deps.Catalog.Open(ctx, sp.Name) },
		Incarnation: func() string { return s.incarnation(source) },
		Metrics:     s.metrics, Logger: s.log, IsConflict: s.deps.IsConflict, RefreshContext: hard,
		OnRefresh: func(out Outcome) { s.refreshed(hard, source, out) },
		jobs:      s.jobs,
	}
	if sp.Unrefreshed && s.cfg.CreateGrace > 0 && !sp.CommittedAt.IsZero() {
		// Created by another writer (the daemon creates none) and not
		// refreshed yet: its creator's refresh comes first.
		cfg.HoldUntil = sp.CommittedAt.Add(s.cfg.CreateGrace)
	}
	o := newOwner(cfg)
	octx, cancel := context.WithCancel(context.Background())
	h := &ownerHandle{spec: sp, owner: o, cancel: cancel, done: make(chan struct{})}
	if fb, ok := s.deps.Bus.(FeedBus); ok && s.busUp.Load() {
		h.feed = &feedRunner{bus: fb, view: sp.Name, source: source, owner: o, log: s.log}
	}
	s.mu.Lock()
	s.owners[sp.Name] = h
	prev := s.retiring[sp.Name]
	s.mu.Unlock()
	go func() {
		defer close(h.done)
		if prev != nil {
			<-prev // the view's previous owner drains, and its feed goes
		}
		// Before any refresh of this owner: commits made before a crash
		// are notified first, in order.
		s.recoverNotifications(hard, sp, r)
		s.metrics.SetViewSource(sp.Name, sp.Source)
		var wg sync.WaitGroup
		if h.feed != nil {
			// Before the catch-up refresh: no change set falls between
			// the two. If NATS is away now, the feed keeps trying.
			fctx, fcancel := context.WithTimeout(hard, feedOpenTimeout)
			if err := h.feed.open(fctx); err != nil {
				s.log.Warn("create the view's feed; refreshing from the source until it exists", "view", sp.Name, "err", err)
			}
			fcancel()
			wg.Go(func() { h.feed.run(octx) })
		}
		o.Run(octx)
		wg.Wait()
	}()
	s.log.Info("view served", "view", sp.Name, "source", sp.Source, "policy", sp.Policy.Mode.String())
}

// refreshed reports a refresh attempt: notification, trace, history.
func (s *Server) refreshed(ctx context.Context, source string, out Outcome) {
	s.notify(ctx, source, out)
	if out.Err == nil && s.log.Enabled(ctx, slog.LevelDebug) {
		// The rest of a commit's trace: woken, started, view committed,
		// notification published.
		s.log.Debug("refresh notified", "view", out.View, "source_version", out.Result.SourceVersion, "mode", out.Result.Mode,
			"woken_at", out.WokenAt, "started_at", out.StartedAt, "view_committed_at", out.Result.CommittedAt, "notified_at", time.Now())
	}
	s.recordHistory(source, out)
}

// feedOpenTimeout bounds the creation of a view's feed at its start.
const feedOpenTimeout = 2 * time.Second

// deleteFeed removes a dropped view's feed (its durable consumer).
func (s *Server) deleteFeed(view string) {
	fb, ok := s.deps.Bus.(FeedBus)
	if !ok || !s.busUp.Load() {
		return
	}
	dctx, cancel := context.WithTimeout(context.Background(), feedOpenTimeout)
	defer cancel()
	if err := fb.DeleteViewFeed(dctx, view); err != nil {
		s.log.Warn("delete the feed of a dropped view", "view", view, "err", err)
	}
}

// forgetView deletes what the store keeps for a dropped view (its kept
// source state, its refresh history); its jobs stay.
func (s *Server) forgetView(view string) {
	vf, ok := s.deps.History.(ViewForgetter)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), jobStoreTimeout)
	defer cancel()
	if err := vf.ForgetView(ctx, view); err != nil {
		s.log.Warn("delete the stored state of a dropped view", "view", view, "err", err)
	}
}

// notify publishes a refresh notification (no_op refreshes are not news,
// unless they end failures; a failure is, once per distinct error). The
// source commit time it reports is the one the lag was measured from (the
// oldest change set the refresh covers, or the source version's manifest
// when no change set named it), so lag_ms is always committed_at −
// source_committed_at.
func (s *Server) notify(ctx context.Context, source string, out Outcome) {
	view, res, lag, err := out.View, out.Result, out.Lag, out.Err
	if s.deps.Bus == nil || (err == nil && res.Mode == "no_op" && out.Cleared == "") || (err != nil && out.Repeated) {
		return
	}
	n := &message.Notification{Schema: message.SchemaVersion, View: view, Source: source, Mode: res.Mode, RowsWritten: res.RowsWritten,
		SourceVersion: res.SourceVersion, Version: res.Version, CommittedAt: res.CommittedAt,
		Retries: out.Retries, Cleared: out.Cleared, Instance: s.cfg.InstanceID}
	if n.CommittedAt.IsZero() {
		n.CommittedAt = time.Now()
	}
	if err != nil {
		n.Error = err.Error()
	} else if lag >= 0 {
		n.LagMS = float64(lag.Microseconds()) / 1000
		n.SourceCommittedAt = n.CommittedAt.Add(-lag)
	}
	if ob := s.outbox.Load(); ob != nil {
		ob.publish(ctx, n) // kept and published later if NATS is away
		return
	}
	if perr := s.deps.Bus.PublishRefreshed(ctx, n); perr != nil {
		s.log.Warn("publish refresh notification", "view", view, "err", perr)
	}
}

// stopOwner stops the owner of one view, if it has one, without waiting
// for it (see retireLocked).
func (s *Server) stopOwner(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.owners[name]; h != nil {
		delete(s.owners, name)
		s.retireLocked(h, false)
	}
}

// stopOwners drains every owner: no new refresh starts; one in flight
// finishes (or stops, if the hard context is done).
func (s *Server) stopOwners() {
	s.mu.Lock()
	hs := make([]*ownerHandle, 0, len(s.owners))
	for _, h := range s.owners {
		hs = append(hs, h)
	}
	s.owners = map[string]*ownerHandle{}
	s.mu.Unlock()
	for _, h := range hs {
		h.cancel()
	}
	for _, h := range hs {
		<-h.done
	}
	s.drains.Wait()
}
