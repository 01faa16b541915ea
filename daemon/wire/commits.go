package wire

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/matview"
)

var _ daemon.CommitLister = (*refresher)(nil)

// CommitsAfter reads back the view's refresh commits after version: the
// versions whose watermark names themselves (mv.view_version; a
// compaction or a metadata change keeps the watermark of the refresh
// before it), each with what its refresh reported: the rows of the
// fragments it added, its mode (rebuild when none of the previous
// version's fragments is left), the source version and commit time of its
// watermark, and its manifest's commit time.
func (r *refresher) CommitsAfter(ctx context.Context, version uint64, max int) ([]daemon.RefreshResult, error) {
	t := r.v.Table()
	latest, err := t.LatestVersion(ctx)
	if err != nil {
		return nil, err
	}
	var out []daemon.RefreshResult
	var prev *lance.Snapshot
	for v := version + 1; v <= latest && len(out) < max; v++ {
		s, err := t.Checkout(ctx, v)
		if err != nil {
			return out, fmt.Errorf("read view version %d: %w", v, err)
		}
		md := s.Schema.Metadata
		vv, err1 := strconv.ParseUint(md[matview.KeyViewVersion], 10, 64)
		sv, err2 := strconv.ParseUint(md[matview.KeySourceVersion], 10, 64)
		if err1 != nil || err2 != nil || vv != v {
			prev = s
			continue
		}
		if prev == nil || prev.Version != v-1 {
			if prev, err = t.Checkout(ctx, v-1); err != nil {
				return out, fmt.Errorf("read view version %d: %w", v-1, err)
			}
		}
		res := daemon.RefreshResult{SourceVersion: sv, Version: v, CommittedAt: s.Timestamp}
		res.Mode, res.RowsWritten = written(prev, s)
		if ns, err := strconv.ParseInt(md[matview.KeySourceVersionTS], 10, 64); err == nil && ns > 0 {
			res.SourceCommittedAt = time.Unix(0, ns)
		}
		out = append(out, res)
		prev = s
	}
	return out, nil
}

// written is the mode and the rows of a commit: the physical rows of the
// fragments it added; a rebuild replaces every fragment (and the first
// refresh of a view is one).
func written(prev, s *lance.Snapshot) (string, uint64) {
	old := make(map[uint64]bool, len(prev.Fragments))
	for _, f := range prev.Fragments {
		old[f.ID] = true
	}
	var rows uint64
	kept := false
	for _, f := range s.Fragments {
		if old[f.ID] {
			kept = true
			continue
		}
		rows += f.PhysicalRows
	}
	_, refreshed := prev.Schema.Metadata[matview.KeySourceVersion]
	if !refreshed || !kept && len(prev.Fragments) > 0 {
		return string(matview.ModeRebuild), rows
	}
	return string(matview.ModeIncremental), rows
}
