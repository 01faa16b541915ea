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
// versions whose watermark names themselves (mv.view_version) and that a
// refresh made (isRefresh: a compaction or a metadata change keeps the
// watermark of the refresh before it, naming itself only to keep the view
// intact for LanceDB), each with what its refresh reported: the rows of the
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
		ok, err := isRefresh(ctx, prev, s)
		if err != nil {
			return out, fmt.Errorf("read view version %d: %w", v, err)
		}
		if !ok {
			prev = s
			continue
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

// isRefresh says whether view version s, whose watermark names itself,
// was committed by a refresh: one that stamped a new watermark (source
// version, its commit time or the refresh time), or wrote rows at the
// same one (a rebuild: a forced full refresh, a drifted view). A
// compaction step (a Rewrite) and a metadata change (view alter, an
// UpdateConfig) carry the watermark of the version before them on;
// reported as refreshes, they would be notifications of rows nobody
// wrote.
func isRefresh(ctx context.Context, prev, s *lance.Snapshot) (bool, error) {
	pm, sm := prev.Schema.Metadata, s.Schema.Metadata
	for _, k := range []string{matview.KeySourceVersion, matview.KeySourceVersionTS, matview.KeyRefreshedAtMs} {
		if pm[k] != sm[k] {
			return true, nil
		}
	}
	tx, err := s.Transaction(ctx)
	if err != nil {
		return false, err
	}
	if tx == nil {
		return true, nil // no transaction recorded: as before, a refresh
	}
	switch tx.Operation {
	case lance.OpAppend, lance.OpDelete, lance.OpUpdate, lance.OpOverwrite, lance.OpMerge:
		return true, nil
	}
	return false, nil
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
