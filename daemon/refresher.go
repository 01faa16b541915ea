package daemon

import (
	"context"
	"time"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/matview"
)

// Refresher is one materialized view, as the daemon drives it (the
// matview View satisfies it). Refresh brings the view up to date with its
// source in at most one view commit; it must be safe to cancel at any
// point (a view commit is atomic, so a cancelled refresh leaves the view
// at its previous version or at the new one, whole). Refresh is called by
// one goroutine at a time per view.
type Refresher interface {
	Refresh(ctx context.Context, opts RefreshOptions) (RefreshResult, error)
}

// RefreshOptions are the options of one refresh.
type RefreshOptions struct {
	// Full forces a rebuild.
	Full bool
	// SourceVersion, if not 0, is the source version the daemon was told
	// of; the refresher may refresh further (to the newest).
	SourceVersion uint64
	// Pin makes SourceVersion the exact version to reflect (a refresh job
	// given a source_version): older than the view's, the view is rebuilt
	// to it.
	Pin bool
	// Budget caps the refresh's resources (a job's; auto-refreshes run
	// uncapped unless the view's metadata says otherwise).
	Budget matview.Budget
	// Changes, if set, is the change set of the source from the view's
	// watermark to Changes.To, coalesced from the view's feed. It is a
	// hint: the refresher uses it when it refreshes exactly that step
	// (the source has no newer version), and computes the change set from
	// the source otherwise.
	Changes *lance.ChangeSet
}

// RefreshResult is what a refresh did, as LanceDB reports it, plus times
// for lag.
type RefreshResult struct {
	// Mode is "rebuild", "incremental" or "no_op".
	Mode string
	// RowsWritten is the number of rows the commit wrote.
	RowsWritten uint64
	// SourceVersion is the source version the view now reflects.
	SourceVersion uint64
	// Version is the view's version after the refresh.
	Version uint64
	// SourceCommittedAt is the commit time of SourceVersion and
	// CommittedAt that of the view commit; zero when unknown (then the
	// daemon measures lag from when it noticed the source commit).
	SourceCommittedAt, CommittedAt time.Time
	// Warnings are what went wrong beside a commit that landed (a
	// provenance index not saved: rebuilt next time); the daemon logs them.
	Warnings []string
	// Reason says why a rebuild was needed ("" otherwise), as
	// matview.Result.Reason.
	Reason string
}
