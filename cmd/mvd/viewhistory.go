package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path/filepath"
	"time"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/serveinfo"
)

// historyShown is how many recent refreshes `mvd view show` prints.
const historyShown = 10

// historyTimeout bounds the daemon's answer.
const historyTimeout = 5 * time.Second

// refreshHistory is view's most recent refreshes (newest first) as `mvd
// serve` recorded them in DIR/.mvd/state. Badger lets one process open a
// store, and the daemon holds it while it runs: then the daemon is asked
// (GET /views/{view}/history on its admin server); otherwise the store is
// opened read-only, which writes nothing. No daemon ever ran: no history.
func refreshHistory(ctx context.Context, dbDir, view string, limit int) ([]checkpoint.RefreshRecord, error) {
	stateDir := filepath.Join(dbDir, ".mvd")
	info, running, err := serveinfo.Running(stateDir)
	if err != nil {
		return nil, err
	}
	if running {
		if info.AdminAddr == "" {
			return nil, errors.New("the daemon serving this database is starting")
		}
		return daemonHistory(ctx, info.AdminAddr, view, limit)
	}
	s, err := checkpoint.OpenReadOnly(filepath.Join(stateDir, "state"), checkpoint.Options{})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.History(ctx, view, limit)
}

// daemonHistory asks the running daemon at admin for the history.
func daemonHistory(ctx context.Context, admin, view string, limit int) ([]checkpoint.RefreshRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, historyTimeout)
	defer cancel()
	u := fmt.Sprintf("http://%s/views/%s/history?limit=%d", admin, url.PathEscape(view), limit)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("ask the daemon: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("ask the daemon: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the daemon answered %s: %s", resp.Status, oneLine(string(body)))
	}
	var out []checkpoint.RefreshRecord
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("the daemon's history: %w", err)
	}
	return out, nil
}

// printHistory prints the recent refreshes section of `mvd view show`.
func printHistory(w io.Writer, hist []checkpoint.RefreshRecord) error {
	if len(hist) == 0 {
		return nil
	}
	fmt.Fprintln(w, "recent refreshes:")
	for _, r := range hist {
		at := r.StartedAt.UTC().Format(time.RFC3339Nano)
		took := float64(r.Duration.Microseconds()) / 1000
		var err error
		if r.Error != "" {
			_, err = fmt.Fprintf(w, "  %s  failed after %.1f ms: %s\n", at, took, oneLine(r.Error))
		} else {
			_, err = fmt.Fprintf(w, "  %s  %s, source version %d -> %d, view version %d, %d rows written, %.1f ms, lag %.1f ms\n",
				at, r.Mode, r.SourceFrom, r.SourceVersion, r.ViewVersion, r.RowsWritten, took, r.LagMS)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
