package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/daemon"
)

// TestHistory: refresh attempts, failed or not, land in Badger's history.
func TestHistory(t *testing.T) {
	ctx := context.Background()
	store, err := checkpoint.Open(filepath.Join(t.TempDir(), "state"), checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	h := History{Store: store}
	start := time.Now().UTC()
	ok := daemon.HistoryRecord{Source: "src", SourceIncarnation: "1.7", Outcome: daemon.Outcome{
		View: "v", StartedAt: start, Took: 3 * time.Millisecond, Lag: 5 * time.Millisecond, PrevSourceVersion: 2,
		Result: daemon.RefreshResult{Mode: "incremental", RowsWritten: 4, SourceVersion: 5, Version: 9},
	}}
	failed := daemon.HistoryRecord{Source: "src", SourceIncarnation: "1.7", Outcome: daemon.Outcome{
		View: "v", StartedAt: start.Add(time.Second), Took: time.Millisecond, Lag: -1, PrevSourceVersion: 5, Err: errors.New("disk full"),
	}}
	other := daemon.HistoryRecord{Source: "src", Outcome: daemon.Outcome{View: "w", Lag: -1, Result: daemon.RefreshResult{Mode: "rebuild", SourceVersion: 5, Version: 2}}}
	if err := h.RecordRefreshes(ctx, []daemon.HistoryRecord{ok, failed, other}); err != nil {
		t.Fatal(err)
	}
	hist, err := store.History(ctx, "v", 10)
	if err != nil || len(hist) != 2 {
		t.Fatalf("history %+v, %v", hist, err)
	}
	newest, oldest := hist[0], hist[1]
	if newest.Error != "disk full" || newest.Mode != "" || newest.SourceFrom != 5 {
		t.Errorf("failed record %+v", newest)
	}
	if oldest.Mode != "incremental" || oldest.RowsWritten != 4 || oldest.SourceFrom != 2 || oldest.SourceVersion != 5 ||
		oldest.ViewVersion != 9 || oldest.Duration != 3*time.Millisecond || oldest.LagMS != 5 || !oldest.StartedAt.Equal(start) {
		t.Errorf("record %+v", oldest)
	}
	var buf bytes.Buffer
	if err := h.WriteHistory(ctx, &buf, "v", 1); err != nil {
		t.Fatal(err)
	}
	var served []checkpoint.RefreshRecord
	if err := json.Unmarshal(buf.Bytes(), &served); err != nil || len(served) != 1 || served[0].Error != "disk full" {
		t.Errorf("served history %s: %+v, %v", buf.Bytes(), served, err)
	}
	if err := h.WriteHistory(ctx, &buf, "none", 1); err != nil || !strings.HasSuffix(buf.String(), "[]\n") {
		t.Errorf("history of a view without one: %q, %v", buf.String(), err)
	}
}

func checkpointOpen(cfg daemon.Config) (*checkpoint.Store, error) {
	return checkpoint.Open(filepath.Join(cfg.StateDir, "state"), checkpoint.Options{})
}
