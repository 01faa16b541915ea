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

// cleanupEvery is how often an idle view with versions beyond its
// retention's count is asked whether a version cleanup is due: the views'
// old versions go within about this long of their retention allowing it.
const cleanupEvery = time.Second

// Maintain does one maintenance step of the view: a bounded compaction
// step if the view's compaction policy (its mv.compact_* keys over the
// daemon's defaults) says one is due, then, unless compaction has more to
// do, a version cleanup if the view's retention allows one (asked at most
// every cleanupEvery). It asks to run again while compaction has more to
// do, or while versions beyond the retention's count wait to age out.
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
		out.Compaction = &daemon.CompactionStats{Took: res.Took, Rows: res.Rows, FragmentsRemoved: res.FragmentsRemoved,
			FragmentsAdded: res.FragmentsAdded, BytesRead: res.BytesRead, BytesWritten: res.BytesWritten}
	}
	if res.More {
		out.Again = maintainAgain
		return out, nil
	}
	now := time.Now()
	if now.Sub(r.cleanupChecked) < cleanupEvery {
		out.Again = cleanupEvery - now.Sub(r.cleanupChecked)
		return out, nil
	}
	r.cleanupChecked = now
	due, err := r.v.CleanupDue(ctx, now)
	if err != nil {
		return out, err
	}
	if due {
		cr, err := r.v.CleanupVersions(ctx, matview.CleanupOptions{Now: now})
		if err != nil {
			return out, err
		}
		out.Cleanup = &daemon.CleanupStats{Took: cr.Duration, VersionsRemoved: cr.VersionsRemoved,
			VersionsKept: cr.VersionsKept, BytesRemoved: cr.BytesRemoved}
	}
	if r.agingOut(ctx) {
		out.Again = cleanupEvery
	}
	return out, nil
}

// agingOut reports whether the view holds more versions than its
// retention keeps by count: those go once they are old enough.
func (r *refresher) agingOut(ctx context.Context) bool {
	m, err := r.v.Table().Latest(ctx)
	if err != nil {
		return false
	}
	ret, err := matview.RetentionFromMetadata(m.Schema.Metadata)
	if err != nil {
		return false
	}
	refs, err := r.v.Table().Versions(ctx)
	return err == nil && len(refs) > ret.Keep
}
