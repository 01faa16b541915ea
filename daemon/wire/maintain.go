package wire

import (
	"context"
	"time"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/matview"
)

// maintainAgain is how soon the next compaction step of a view that
// stopped at its bound runs, if no refresh comes first.
const maintainAgain = time.Millisecond

// cleanupEvery is how often, at most, a view is asked when its next
// version cleanup is due (View.NextCleanup): its old versions go within
// about this long of their retention allowing it.
const cleanupEvery = time.Second

// Maintain does one maintenance step of the view: a bounded compaction
// step if the view's compaction policy (its mv.compact_* keys over the
// daemon's defaults) says one is due, then, unless compaction has more to
// do, a version cleanup if the view's retention allows one (asked at most
// every cleanupEvery). It asks to run again while compaction has more to
// do, and when the next version will age out.
func (r *refresher) Maintain(ctx context.Context) (daemon.Maintenance, error) {
	out, err := r.maintainStep(ctx)
	if err == nil {
		err = r.measure(ctx, &out)
	}
	return out, err
}

// measureEvery bounds how often an idle view's storage is measured (a
// listing of its directory) for the gauges; a step that compacted or
// cleaned up measures it at once.
const measureEvery = time.Second

// measure sets out.Storage to what the view holds on disk.
func (r *refresher) measure(ctx context.Context, out *daemon.Maintenance) error {
	now := time.Now()
	if out.Compaction == nil && out.Cleanup == nil && now.Sub(r.measured) < measureEvery {
		return nil
	}
	st, err := r.v.Storage(ctx)
	if err != nil {
		return err
	}
	r.measured = now
	out.Storage = &daemon.ViewStorage{Fragments: st.Fragments, Versions: st.Versions, Bytes: st.Bytes}
	return nil
}

func (r *refresher) maintainStep(ctx context.Context) (daemon.Maintenance, error) {
	var out daemon.Maintenance
	res, err := r.v.Compact(ctx, matview.CompactOptions{Policy: r.compact})
	if err != nil {
		return out, err
	}
	if res.Version != 0 {
		out.Compaction = &daemon.CompactionStats{Version: res.Version, Took: res.Took, Rows: res.Rows, FragmentsRemoved: res.FragmentsRemoved,
			FragmentsAdded: res.FragmentsAdded, BytesRead: res.BytesRead, BytesWritten: res.BytesWritten}
	}
	if res.More {
		out.Again = maintainAgain
		return out, nil
	}
	now := time.Now()
	if wait := cleanupEvery - now.Sub(r.cleanupChecked); wait > 0 {
		out.Again = wait
		return out, nil
	}
	r.cleanupChecked = now
	next, err := r.v.NextCleanup(ctx, now)
	if err != nil {
		return out, err
	}
	if !next.IsZero() && !next.After(now) {
		cr, err := r.v.CleanupVersions(ctx, matview.CleanupOptions{Now: now})
		if err != nil {
			return out, err
		}
		out.Cleanup = &daemon.CleanupStats{Took: cr.Duration, VersionsRemoved: cr.VersionsRemoved,
			VersionsKept: cr.VersionsKept, BytesRemoved: cr.BytesRemoved}
		if next, err = r.v.NextCleanup(ctx, time.Now()); err != nil {
			return out, err
		}
	}
	if !next.IsZero() {
		// The next version to age out: checked then (at most once per
		// cleanupEvery), not at every refresh.
		out.Again = max(time.Until(next), cleanupEvery)
	}
	return out, nil
}
