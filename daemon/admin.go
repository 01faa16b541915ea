package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ReadyFunc reports whether the daemon is ready, and if not, why.
type ReadyFunc func() (ready bool, why string)

// Admin is the admin HTTP server: /healthz (the process is up),
// /readyz (ReadyFunc) and /metrics (Prometheus).
type Admin struct {
	ln  net.Listener
	srv *http.Server
}

// ListenAdmin listens on addr now (so a busy port fails the start with a
// clear error) and serves once Serve is called.
func ListenAdmin(addr string, metrics *Metrics, ready ReadyFunc, log *slog.Logger) (*Admin, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin HTTP on %s: %w (another mvd serve? choose one with --admin-addr)", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if ok, why := ready(); !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "not ready: "+why)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		EnableOpenMetrics: true,
	}))
	return &Admin{ln: ln, srv: &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}}, nil
}

// Addr is the address actually listened on.
func (a *Admin) Addr() string { return a.ln.Addr().String() }

// Serve serves until Shutdown; it returns nil after a Shutdown.
func (a *Admin) Serve() error {
	if err := a.srv.Serve(a.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops the server, letting requests in flight finish until ctx
// is done.
func (a *Admin) Shutdown(ctx context.Context) error { return a.srv.Shutdown(ctx) }
