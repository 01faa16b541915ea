package wire

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/matview"
)

// Catalog is a matview.DB as the daemon sees it: its views, and the
// change sets and commit times of its tables.
type Catalog struct {
	DB *matview.DB
	// Compact is the compaction policy of views that set none (the zero
	// value: matview.DefaultCompactPolicy).
	Compact matview.CompactPolicy
}

var (
	_ daemon.Catalog      = Catalog{}
	_ daemon.ChangeSource = Catalog{}
)

// Changes is the change set of table from version from to version to.
func (c Catalog) Changes(ctx context.Context, table string, from, to uint64) (*lance.ChangeSet, error) {
	return c.DB.Changes(ctx, table, from, to)
}

// LatestVersion is the newest version of table.
func (c Catalog) LatestVersion(ctx context.Context, table string) (uint64, error) {
	return c.DB.LatestVersion(ctx, table)
}

// Watermark is the source version the latest commit of view reflects.
func (c Catalog) Watermark(ctx context.Context, view string) (uint64, bool, error) {
	wm, err := c.DB.Watermark(ctx, view)
	return wm.SourceVersion, wm.Valid, err
}

// CommitTime is the commit time of one version of table.
func (c Catalog) CommitTime(ctx context.Context, table string, version uint64) (time.Time, error) {
	return c.DB.CommitTime(ctx, table, version)
}

// Views lists the database's views with their sources and policies. A
// view that cannot be read comes with only its name and Err (the server
// logs and counts it).
func (c Catalog) Views(ctx context.Context) ([]daemon.ViewSpec, error) {
	entries, err := c.DB.ListViews(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]daemon.ViewSpec, 0, len(entries))
	var errs []error
	for _, e := range entries {
		if e.Err != nil {
			out = append(out, daemon.ViewSpec{Name: e.Name, Err: e.Err})
			continue
		}
		if e.Definition == nil {
			continue
		}
		spec, ok, err := c.View(ctx, e.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			out = append(out, spec)
		}
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// View describes one view: its source and its auto-refresh policy.
func (c Catalog) View(ctx context.Context, name string) (daemon.ViewSpec, bool, error) {
	v, err := c.DB.OpenView(ctx, name)
	if err != nil {
		if errors.Is(err, matview.ErrNotAView) || errors.Is(err, matview.ErrNotFound) {
			return daemon.ViewSpec{}, false, nil
		}
		return daemon.ViewSpec{}, false, err
	}
	info, err := v.Info(ctx)
	if err != nil {
		if errors.Is(err, matview.ErrNotAView) || errors.Is(err, matview.ErrNotFound) {
			return daemon.ViewSpec{}, false, nil
		}
		return daemon.ViewSpec{}, false, err
	}
	pol, err := matview.PolicyFromMetadata(info.Metadata)
	if err != nil {
		return daemon.ViewSpec{}, false, fmt.Errorf("view %s: %w", name, err)
	}
	spec := daemon.ViewSpec{Name: name, Source: info.Definition.SourceTable, Policy: pol}
	if !info.Watermark.Valid {
		spec.Unrefreshed, spec.CommittedAt = true, info.CommittedAt
	}
	return spec, true, nil
}

// Open returns the view's refresher: the one *matview.View of that name,
// whose planning state and provenance index stay warm across refreshes.
func (c Catalog) Open(ctx context.Context, name string) (daemon.Refresher, error) {
	v, err := c.DB.OpenView(ctx, name)
	if err != nil {
		return nil, err
	}
	pol := c.Compact
	if pol == (matview.CompactPolicy{}) {
		pol = matview.DefaultCompactPolicy()
	}
	return &refresher{v: v, compact: pol}, nil
}

// refresher is one view as its owner drives it (one goroutine).
type refresher struct {
	v       *matview.View
	compact matview.CompactPolicy
	// cleanupChecked is when Maintain last asked whether a version
	// cleanup was due.
	cleanupChecked time.Time
	// measured is when Maintain last measured the view's storage.
	measured time.Time
}

// Refresh refreshes to the newest source version (the wake-up's version
// is a hint, not a pin: pinning would make the view travel back in time),
// or to the one a refresh job pinned (o.Pin).
// A change set coalesced from the view's feed is passed on: matview uses
// it when it spans exactly the step it refreshes, and computes its own
// otherwise. The result carries the commit time of the source version the
// view now reflects, as the watermark the refresh committed records it
// (the source manifest's timestamp, matview.Result.SourceCommittedAt), so
// that lag is known even for a commit the
// daemon did not see happen (a catch-up after a restart).
func (r *refresher) Refresh(ctx context.Context, o daemon.RefreshOptions) (daemon.RefreshResult, error) {
	// A refresh without a budget of its own (an auto-refresh) takes the
	// view's default (mv.cpu_millis, …), if it has one.
	mo := matview.RefreshOptions{Full: o.Full, Changes: o.Changes, Budget: o.Budget, ViewBudget: true}
	if o.Pin {
		sv := o.SourceVersion
		mo.SourceVersion = &sv
	}
	res, err := r.v.Refresh(ctx, mo)
	if err != nil {
		return daemon.RefreshResult{}, err
	}
	// The view commit is visible once Refresh returns: that instant, not
	// the manifest's timestamp (taken when the commit was built, which a
	// commit staged ahead takes before its turn), ends the lag.
	out := daemon.RefreshResult{
		Mode: string(res.Mode), RowsWritten: res.RowsWritten, SourceVersion: res.SourceVersion,
		Version: res.Version, CommittedAt: time.Now(), Warnings: res.Warnings, Reason: res.Reason,
	}
	if res.Mode != matview.ModeNoOp {
		out.SourceCommittedAt = res.SourceCommittedAt
	}
	return out, nil
}

// Watermark is the view's latest version and the source version its last
// commit reflects (0 for a view never refreshed).
func (r *refresher) Watermark(ctx context.Context) (daemon.ViewState, error) {
	info, err := r.v.Info(ctx)
	if err != nil {
		return daemon.ViewState{}, err
	}
	st := daemon.ViewState{Version: info.Version}
	if info.Watermark.Valid {
		st.SourceVersion = info.Watermark.SourceVersion
	}
	return st, nil
}

// IsConflict recognizes matview's conflict error: another refresher (a
// second daemon, LanceDB) committed the same work first.
func IsConflict(err error) bool { return errors.Is(err, matview.ErrConflict) }
