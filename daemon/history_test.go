package daemon

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// stalledHistory is a History whose writes wait until released: a state
// store that is slow (a disk busy with fsyncs).
type stalledHistory struct {
	release chan struct{}
	mu      sync.Mutex
	batches [][]HistoryRecord
}

func (h *stalledHistory) RecordRefreshes(ctx context.Context, rs []HistoryRecord) error {
	select {
	case <-h.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.batches = append(h.batches, rs)
	return nil
}

func (h *stalledHistory) WriteHistory(ctx context.Context, w io.Writer, view string, limit int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, b := range h.batches {
		n += len(b)
	}
	_, err := fmt.Fprintf(w, "[%d]", n)
	return err
}

func (h *stalledHistory) records() (records, batches int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, b := range h.batches {
		records += len(b)
	}
	return records, len(h.batches)
}

// pollUntil polls cond every millisecond for up to 20 s.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestHistoryOffRefreshPath: recording a refresh in the history never
// holds the view's next refresh: with the history store stalled, the view
// follows every source commit; the records queued meanwhile are written
// in one batch once the store answers, and the admin server serves the
// history back.
func TestHistoryOffRefreshPath(t *testing.T) {
	db := t.TempDir()
	src := createTable(t, db, "src")
	createTable(t, db, "v")
	good := &sourceRefresher{root: src}
	cat := &fakeCatalog{views: map[string]ViewSpec{}, refs: map[string]Refresher{}}
	cat.add(ViewSpec{Name: "v", Source: "src"}, good)
	cfg, err := LoadConfig(parseFlags(t, "--db", db, "--admin-addr", "127.0.0.1:0", "--watch", "fsnotify"), nil)
	if err != nil {
		t.Fatal(err)
	}
	hist := &stalledHistory{release: make(chan struct{})}
	srv := NewServer(cfg, Deps{Catalog: cat, Logger: quietLog, History: hist})
	drain, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(drain, context.Background()) }()
	released := false
	defer func() {
		if !released {
			close(hist.release)
		}
		stop()
		<-done
	}()
	<-srv.Started()
	for i := int64(0); i < 3; i++ {
		v := appendRows(t, src, 10+i, 11+i)
		pollUntil(t, fmt.Sprintf("view at source version %d while the history is stalled", v), func() bool { _, seen := good.state(); return seen == v })
	}
	if n, _ := hist.records(); n != 0 {
		t.Fatalf("%d records written by a stalled store", n)
	}
	released = true
	close(hist.release)
	calls, _ := good.state()
	pollUntil(t, "every refresh recorded", func() bool { n, _ := hist.records(); return n == calls })
	if _, batches := hist.records(); batches >= calls {
		t.Errorf("%d refreshes in %d batches: not batched", calls, batches)
	}
	resp, err := http.Get("http://" + srv.Info().AdminAddr + "/views/v/history?limit=5")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != fmt.Sprintf("[%d]", calls) {
		t.Errorf("GET history: %d %s", resp.StatusCode, body)
	}
}
