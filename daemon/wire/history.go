package wire

import (
	"context"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/daemon"
)

// History keeps refresh history and progress in a checkpoint.Store: the
// history log, and the watermark cache (never trusted over the view's own
// metadata).
type History struct{ Store *checkpoint.Store }

var _ daemon.History = History{}

// RecordRefresh appends the attempt to the view's history and, after a
// success, caches its progress.
func (h History) RecordRefresh(ctx context.Context, r daemon.HistoryRecord) error {
	rec := checkpoint.RefreshRecord{
		View: r.View, Mode: r.Result.Mode, RowsWritten: r.Result.RowsWritten,
		SourceFrom: r.PrevSourceVersion, SourceVersion: r.Result.SourceVersion, ViewVersion: r.Result.Version,
		StartedAt: r.StartedAt, FinishedAt: r.StartedAt.Add(r.Took), Duration: r.Took,
	}
	if r.Lag >= 0 {
		rec.LagMS = float64(r.Lag.Microseconds()) / 1000
	}
	if r.Err != nil {
		rec.Error = r.Err.Error()
	}
	if r.Err != nil || r.Result.Mode == "" {
		_, err := h.Store.AppendHistory(ctx, rec)
		return err
	}
	// Both in one synced transaction: one fsync per refresh, not two.
	_, err := h.Store.RecordRefresh(ctx, checkpoint.Progress{
		View: r.View, Incarnation: r.SourceIncarnation, SourceVersion: r.Result.SourceVersion, ViewVersion: r.Result.Version,
	}, rec)
	return err
}
