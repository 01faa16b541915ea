package daemon

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"
)

// historyQueue bounds the refresh records waiting for the history
// writer; beyond it records are dropped (and counted in the log): the
// history is a log of refreshes, never a reason to slow one down.
const historyQueue = 4096

// historyWriter takes refresh records off the owners' goroutines and
// writes them in batches: whatever arrived while the previous write
// synced goes in the next one. Its goroutine is owned by Server.Run,
// which stops it after the owners, so the last records are written.
type historyWriter struct {
	h     History
	log   *slog.Logger
	queue chan HistoryRecord
}

func newHistoryWriter(h History, log *slog.Logger) *historyWriter {
	return &historyWriter{h: h, log: log, queue: make(chan HistoryRecord, historyQueue)}
}

// add queues a record without blocking.
func (w *historyWriter) add(r HistoryRecord) {
	select {
	case w.queue <- r:
	default:
		w.log.Warn("refresh history is behind; record dropped", "view", r.View)
	}
}

// run writes batches until stop is closed, then what is left.
func (w *historyWriter) run(stop <-chan struct{}) {
	for {
		select {
		case r := <-w.queue:
			w.write(w.batch(r))
		case <-stop:
			for len(w.queue) > 0 {
				w.write(w.batch(<-w.queue))
			}
			return
		}
	}
}

// batch is first and every record queued behind it now.
func (w *historyWriter) batch(first HistoryRecord) []HistoryRecord {
	b := []HistoryRecord{first}
	for len(b) < historyQueue {
		select {
		case r := <-w.queue:
			b = append(b, r)
		default:
			return b
		}
	}
	return b
}

// historyWriteTimeout bounds one batch's write.
const historyWriteTimeout = 30 * time.Second

func (w *historyWriter) write(b []HistoryRecord) {
	ctx, cancel := context.WithTimeout(context.Background(), historyWriteTimeout)
	defer cancel()
	if err := w.h.RecordRefreshes(ctx, b); err != nil {
		w.log.Warn("record refresh history", "records", len(b), "err", err)
	}
}

// startHistory starts the server's history writer (nil without a
// History); the function it returns stops it once its queue is written.
func (s *Server) startHistory() (stop func()) {
	if s.deps.History == nil {
		return func() {}
	}
	s.history = newHistoryWriter(s.deps.History, s.log)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		s.history.run(quit)
	}()
	return func() {
		close(quit)
		<-done
	}
}

// recordHistory queues a refresh attempt for the history writer.
func (s *Server) recordHistory(source string, out Outcome) {
	if s.history != nil {
		s.history.add(HistoryRecord{Outcome: out, Source: source, SourceIncarnation: s.incarnation(source)})
	}
}

// historyDefault and historyMax bound GET /views/{view}/history's limit.
const (
	historyDefault = 10
	historyMax     = 1000
)

// adminRoutes are the admin server's routes beyond its own: the refresh
// history, and the control API under /v1/ when Deps has one.
func (s *Server) adminRoutes() []route {
	rs := []route{s.historyRoute()}
	if s.deps.API != nil {
		rs = append(rs, route{Pattern: "/v1/", Handler: s.deps.API})
	}
	return rs
}

// historyRoute serves GET /views/{view}/history?limit=N: the view's most
// recent refreshes from the history store, newest first (the running
// daemon holds the store; `mvd view show` asks it here).
func (s *Server) historyRoute() route {
	return route{Pattern: "GET /views/{view}/history", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.deps.History == nil {
			http.Error(w, "no refresh history kept", http.StatusNotFound)
			return
		}
		limit := historyDefault
		if q := r.URL.Query().Get("limit"); q != "" {
			n, err := strconv.Atoi(q)
			if err != nil || n <= 0 {
				http.Error(w, "limit must be a positive integer", http.StatusBadRequest)
				return
			}
			limit = min(n, historyMax)
		}
		w.Header().Set("Content-Type", "application/json")
		if err := s.deps.History.WriteHistory(r.Context(), w, r.PathValue("view"), limit); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})}
}
