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

	"github.com/mvd-project/mvd/control/httpapi"
)

// readyFunc reports whether the daemon is ready, and if not, why.
type readyFunc func() (ready bool, why string)

// adminServer is the admin HTTP server: /healthz (the process is up),
// /readyz (ReadyFunc), /metrics (Prometheus) and the routes given (the
// control API under /v1/). With a token, every request must carry it.
type adminServer struct {
	ln  net.Listener
	srv *http.Server
}

// adminLimits bound what one client can hold of the admin server: a
// request whose headers and body are not in within read is closed (a
// client trickling a body would otherwise hold its connection forever),
// a response not written within write is cut, an idle keep-alive
// connection closes after idle, and a body over maxBody is refused.
type adminLimits struct {
	readHeader, read, write, idle time.Duration
	maxBody                       int64
	// token, if not empty, is the bearer token every request must carry.
	token string
}

// defaultAdminLimits: the endpoints answer in milliseconds (a
// synchronous refresh or SQL statement extends its own write deadline,
// package httpapi) and a body is one small JSON object, so these only
// ever stop a slow or hostile client.
var defaultAdminLimits = adminLimits{
	readHeader: 5 * time.Second, read: 10 * time.Second, write: 30 * time.Second, idle: 60 * time.Second,
	maxBody: 1 << 20,
}

// route is one more endpoint of the admin server.
type route struct {
	// Pattern is an http.ServeMux pattern ("GET /views/{view}/history").
	Pattern string
	Handler http.Handler
}

// listenAdminDefault listens on addr now (so a busy port fails the start with a
// clear error) and serves once Serve is called; every request must carry
// token, if not empty.
func listenAdminDefault(addr, token string, metrics *Metrics, ready readyFunc, log *slog.Logger, routes ...route) (*adminServer, error) {
	lim := defaultAdminLimits
	lim.token = token
	return listenAdmin(addr, metrics, ready, log, lim, routes...)
}

func listenAdmin(addr string, metrics *Metrics, ready readyFunc, log *slog.Logger, lim adminLimits, routes ...route) (*adminServer, error) {
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
	for _, r := range routes {
		mux.Handle(r.Pattern, r.Handler)
	}
	return &adminServer{ln: ln, srv: &http.Server{
		// The token first: a request without it is answered 401 whatever
		// its body, and reaches nothing.
		Handler:           requireToken(limitBody(mux, lim.maxBody), lim.token),
		ReadHeaderTimeout: lim.readHeader,
		ReadTimeout:       lim.read,
		WriteTimeout:      lim.write,
		IdleTimeout:       lim.idle,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}}, nil
}

// limitBody refuses a request whose declared body is over max at once
// (413, connection closed) and caps the body of the others.
func limitBody(h http.Handler, max int64) http.Handler {
	capped := http.MaxBytesHandler(h, max)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			w.Header().Set("Connection", "close")
			httpapi.WriteError(w, http.StatusRequestEntityTooLarge, 2, fmt.Errorf("request body of %d bytes is over the limit of %d", r.ContentLength, max))
			return
		}
		capped.ServeHTTP(w, r)
	})
}

// Addr is the address actually listened on.
func (a *adminServer) Addr() string { return a.ln.Addr().String() }

// Serve serves until Shutdown; it returns nil after a Shutdown.
func (a *adminServer) Serve() error {
	if err := a.srv.Serve(a.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops the server, letting requests in flight finish until ctx
// is done.
func (a *adminServer) Shutdown(ctx context.Context) error { return a.srv.Shutdown(ctx) }
