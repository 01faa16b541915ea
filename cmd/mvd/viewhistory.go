package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/control"
	"github.com/mvd-project/mvd/control/client"
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
	token, err := client.Token("", os.Getenv)
	if err != nil {
		return nil, err
	}
	c, running, err := client.Find(dbDir, token)
	if err != nil {
		return nil, err
	}
	return historyFrom(ctx, c, running, dbDir, view, limit)
}

// historyFrom is refreshHistory asking c when a daemon is running.
func historyFrom(ctx context.Context, c *client.Client, running bool, dbDir, view string, limit int) ([]checkpoint.RefreshRecord, error) {
	if running {
		return daemonHistory(ctx, c, view, limit)
	}
	s, err := checkpoint.OpenReadOnly(filepath.Join(dbDir, ".mvd", "state"), checkpoint.Options{})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.History(ctx, view, limit)
}

// daemonHistory asks the running daemon for the history.
func daemonHistory(ctx context.Context, c *client.Client, view string, limit int) ([]checkpoint.RefreshRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, historyTimeout)
	defer cancel()
	var out []checkpoint.RefreshRecord
	if err := c.Do(ctx, http.MethodGet, fmt.Sprintf("/views/%s/history?limit=%d", url.PathEscape(view), limit), nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// printHistory prints the recent refreshes section of `mvd view show`,
// as DESCRIBE MATERIALIZED VIEW does.
func printHistory(w io.Writer, hist []checkpoint.RefreshRecord) error {
	return control.WriteHistory(w, hist)
}
