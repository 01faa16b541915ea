package daemon

import (
	"errors"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// unreadableViews reports the views a catalog listing names but cannot
// read (a damaged manifest or definition: ViewSpec.Err). They are not
// served; each is logged when it becomes unreadable (or its error
// changes) and when it is readable again, and mvd_views_unreadable
// counts them, so a view does not silently stop being refreshed.
type unreadableViews struct {
	log   *slog.Logger
	gauge prometheus.Gauge
	mu    sync.Mutex
	seen  map[string]string // view -> error text last logged
}

func newUnreadableViews(log *slog.Logger, reg prometheus.Registerer) *unreadableViews {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mvd_views_unreadable",
		Help: "Views the last listing of the database could not read (a damaged manifest or definition); they are not refreshed.",
	})
	if err := reg.Register(g); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if eg, ok := are.ExistingCollector.(prometheus.Gauge); ok {
				g = eg
			}
		}
	}
	return &unreadableViews{log: log, gauge: g, seen: map[string]string{}}
}

// note logs and counts the unreadable views of a listing and returns the
// others, which are served.
func (u *unreadableViews) note(specs []ViewSpec) []ViewSpec {
	u.mu.Lock()
	defer u.mu.Unlock()
	ok := make([]ViewSpec, 0, len(specs))
	now := map[string]string{}
	for _, sp := range specs {
		if sp.Err == nil {
			ok = append(ok, sp)
			continue
		}
		msg := sp.Err.Error()
		now[sp.Name] = msg
		if u.seen[sp.Name] != msg {
			u.log.Warn("view cannot be read; not refreshed until it can (mvd view drop removes it)", "view", sp.Name, "err", msg)
		}
	}
	for name := range u.seen {
		if _, still := now[name]; !still {
			u.log.Info("view readable again (or gone)", "view", name)
		}
	}
	u.seen = now
	u.gauge.Set(float64(len(now)))
	return ok
}
