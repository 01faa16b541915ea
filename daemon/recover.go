package daemon

import (
	"context"
	"time"

	"github.com/mvd-project/mvd/message"
)

// NotificationLog is implemented by a Bus that keeps the last refresh
// notification of every view (package stream: the refresh stream).
type NotificationLog interface {
	// LastNotification is the newest notification kept for view, or nil
	// when none is.
	LastNotification(ctx context.Context, view string) (*message.Notification, error)
}

// CommitLister is implemented by a Refresher that can read back its
// view's refresh commits (package matview: each commit records its
// watermark).
type CommitLister interface {
	// CommitsAfter lists, oldest first, at most max of the view's refresh
	// commits after version, as a refresh would have reported them.
	CommitsAfter(ctx context.Context, version uint64, max int) ([]RefreshResult, error)
}

// maxRecovered bounds the notifications published for one view at start.
const maxRecovered = 1000

// recoverTimeout bounds the look at one view's missed notifications.
const recoverTimeout = 10 * time.Second

// recoverNotifications publishes, before the view's owner starts, a
// notification for every refresh commit of the view made after the last
// notification the stream keeps for it: a daemon killed between a view
// commit and its publish leaves that commit un-notified, and this start
// is the next chance to tell. Each commit is then notified exactly once:
// the next start finds these notifications in the stream. A view never
// notified (or whose last notification names no version) is left alone:
// which of its commits subscribers heard of is not known.
func (s *Server) recoverNotifications(ctx context.Context, sp ViewSpec, r Refresher) {
	nl, ok := s.deps.Bus.(NotificationLog)
	cl, ok2 := r.(CommitLister)
	if !ok || !ok2 || !s.busUp.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, recoverTimeout)
	defer cancel()
	last, err := nl.LastNotification(ctx, sp.Name)
	if err != nil {
		s.log.Warn("read the view's last notification; commits made before a crash may stay un-notified", "view", sp.Name, "err", err)
		return
	}
	if last == nil || last.Version == 0 {
		return
	}
	commits, err := cl.CommitsAfter(ctx, last.Version, maxRecovered)
	if err != nil {
		s.log.Warn("list the view's commits after its last notification", "view", sp.Name, "after", last.Version, "err", err)
		return
	}
	for _, c := range commits {
		n := &message.Notification{Schema: message.SchemaVersion, View: sp.Name, Source: sp.Source, Mode: c.Mode, RowsWritten: c.RowsWritten,
			SourceVersion: c.SourceVersion, Version: c.Version, CommittedAt: c.CommittedAt, SourceCommittedAt: c.SourceCommittedAt, Recovered: true}
		if !c.SourceCommittedAt.IsZero() && !c.CommittedAt.IsZero() && c.CommittedAt.After(c.SourceCommittedAt) {
			n.LagMS = float64(c.CommittedAt.Sub(c.SourceCommittedAt).Microseconds()) / 1000
		}
		if err := s.deps.Bus.PublishRefreshed(ctx, n); err != nil {
			s.log.Warn("publish a notification missed before a crash", "view", sp.Name, "version", c.Version, "err", err)
			return
		}
	}
	if len(commits) > 0 {
		s.log.Info("published notifications of refreshes committed but not notified before the last stop", "view", sp.Name,
			"after_version", last.Version, "count", len(commits))
	}
}
