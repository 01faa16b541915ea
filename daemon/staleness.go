package daemon

import (
	"context"
	"sort"
	"time"
)

// staleness computes every served view's staleness at scrape time, from
// the tables themselves: the view's watermark (its latest commit), its
// source's latest version and the commit time of the oldest source
// version past the watermark. It reads one view manifest per view, one
// listing per source, and one source manifest per view that is behind; a
// view whose state cannot be read is left out of the scrape.
func (s *Server) staleness(ctx context.Context) []stalenessGauge {
	src := s.deps.Changes
	if src == nil {
		return nil
	}
	s.mu.Lock()
	specs := make([]ViewSpec, 0, len(s.owners))
	for _, h := range s.owners {
		specs = append(specs, h.spec)
	}
	s.mu.Unlock()
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	latest := map[string]uint64{}
	now := time.Now()
	var out []stalenessGauge
	for _, sp := range specs {
		if ctx.Err() != nil {
			break
		}
		l, ok := latest[sp.Source]
		if !ok {
			v, err := src.LatestVersion(ctx, sp.Source)
			if err != nil {
				s.log.Debug("staleness: latest source version", "view", sp.Name, "source", sp.Source, "err", err)
				continue
			}
			l, latest[sp.Source] = v, v
		}
		secs, err := viewStaleness(ctx, src, sp, l, now)
		if err != nil {
			s.log.Debug("staleness", "view", sp.Name, "source", sp.Source, "err", err)
			continue
		}
		out = append(out, stalenessGauge{View: sp.Name, Source: sp.Source, Seconds: secs})
	}
	return out
}

// viewStaleness is now minus the commit time of the oldest version of the
// source (whose latest is latest) that the view does not reflect, or 0.
// When that version is gone (cleaned up), the latest version's commit
// time stands for it: the staleness is then a lower bound.
func viewStaleness(ctx context.Context, src ChangeSource, sp ViewSpec, latest uint64, now time.Time) (float64, error) {
	reflected, _, err := src.Watermark(ctx, sp.Name)
	if err != nil {
		return 0, err
	}
	if reflected >= latest {
		return 0, nil
	}
	at, err := src.CommitTime(ctx, sp.Source, reflected+1)
	if err != nil || at.IsZero() {
		if at, err = src.CommitTime(ctx, sp.Source, latest); err != nil {
			return 0, err
		}
	}
	return max(now.Sub(at).Seconds(), 0), nil
}
