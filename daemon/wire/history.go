package wire

import (
	"context"
	"encoding/json"
	"io"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/daemon"
)

// History keeps refresh history in a checkpoint.Store: the log `mvd view
// show` prints.
type History struct{ Store *checkpoint.Store }

var _ daemon.History = History{}

var _ daemon.ViewForgetter = History{}

// ForgetView deletes a dropped view's kept source state and refresh
// history (checkpoint.Store.DeleteView); the job history stays.
func (h History) ForgetView(ctx context.Context, view string) error {
	return h.Store.DeleteView(ctx, view)
}

// RecordRefreshes appends the attempts to their views' histories, in one
// synced transaction for the batch.
func (h History) RecordRefreshes(ctx context.Context, rs []daemon.HistoryRecord) error {
	out := make([]checkpoint.RefreshRecord, len(rs))
	for i, r := range rs {
		out[i] = record(r)
	}
	return h.Store.RecordRefreshes(ctx, out)
}

// record is the history record of one attempt.
func record(r daemon.HistoryRecord) checkpoint.RefreshRecord {
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
	return rec
}

// WriteHistory writes the view's most recent records as a JSON array of
// checkpoint.RefreshRecord, newest first.
func (h History) WriteHistory(ctx context.Context, w io.Writer, view string, limit int) error {
	recs, err := h.Store.History(ctx, view, limit)
	if err != nil {
		return err
	}
	if recs == nil {
		recs = []checkpoint.RefreshRecord{}
	}
	return json.NewEncoder(w).Encode(recs)
}
