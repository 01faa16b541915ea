package bench

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The stages of the maintenance benchmark's freshness (MVD_MAINT_TRACE=1):
// the in-process daemon logs at debug level to a handler that keeps the
// two trace lines of each commit ("change set published": when the
// watcher noticed the source version and published its change set;
// "refresh notified": when each view's refresh started and committed),
// and the freshness of the first and last commits is split into
//
//	committed→noticed   LanceDB's commit time (the manifest's timestamp) to
//	                    the watcher's look (LanceDB finishing its commit,
//	                    fsnotify, the wake-up), and within it
//	committed→returned  to the driver's call returning in this process
//	                    (LanceDB writing its manifest, the driver's reply)
//	committed→appeared  to the manifest's appearance (the bench's own
//	                    inotify watch): LanceDB listing the versions and
//	                    writing the manifest
//	appeared→noticed    from then to the watcher's look (fsnotify, the
//	                    wake-up: the share of committed→noticed that is mvd's)
//	noticed→published   the watcher: manifest read, change set, publish
//	published→started   delivery to the view's owner, its wait
//	started→committed   the refresh
//	committed→arrived   the notification, to the subscriber

// maintTrace keeps the trace lines, by source version.
type maintTrace struct {
	mu        sync.Mutex
	noticed   map[uint64][2]time.Time            // noticed, published
	refreshed map[string]map[uint64][2]time.Time // view → source version → started, committed
}

func newMaintTrace() *maintTrace {
	return &maintTrace{noticed: map[uint64][2]time.Time{}, refreshed: map[string]map[uint64][2]time.Time{}}
}

// Enabled implements slog.Handler: debug and up.
func (t *maintTrace) Enabled(context.Context, slog.Level) bool { return true }

// WithAttrs implements slog.Handler (the daemon's attributes are not needed).
func (t *maintTrace) WithAttrs([]slog.Attr) slog.Handler { return t }

// WithGroup implements slog.Handler.
func (t *maintTrace) WithGroup(string) slog.Handler { return t }

// Handle implements slog.Handler: it keeps the two trace lines.
func (t *maintTrace) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "change set published" && r.Message != "refresh notified" {
		return nil
	}
	var (
		view       string
		version    uint64
		a, b, c, d time.Time
	)
	r.Attrs(func(at slog.Attr) bool {
		switch at.Key {
		case "to", "source_version":
			version = at.Value.Uint64()
		case "view":
			view = at.Value.String()
		case "noticed_at":
			a = at.Value.Time()
		case "published_at":
			b = at.Value.Time()
		case "started_at":
			c = at.Value.Time()
		case "view_committed_at":
			d = at.Value.Time()
		}
		return true
	})
	t.mu.Lock()
	defer t.mu.Unlock()
	if r.Message == "change set published" {
		t.noticed[version] = [2]time.Time{a, b}
		return nil
	}
	if t.refreshed[view] == nil {
		t.refreshed[view] = map[uint64][2]time.Time{}
	}
	t.refreshed[view][version] = [2]time.Time{c, d}
	return nil
}

// stages splits the freshness of view over the commits [lo, hi) of run.
func (t *maintTrace) stages(run maintRun, view string, lo, hi int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	names := []string{"committed→noticed", "noticed→published", "published→started", "started→committed", "committed→arrived", "total", "(committed→returned)", "(committed→appeared)", "(appeared→noticed)"}
	st := make([][]time.Duration, len(names))
	for i := lo; i < hi && i < len(run.versions); i++ {
		v := run.versions[i]
		n, ok1 := t.noticed[v]
		r, ok2 := t.refreshed[view][v]
		if !ok1 || !ok2 {
			continue // coalesced into a later version's refresh
		}
		at := []time.Time{run.committed[i], n[0], n[1], r[0], r[1], run.arrived[view][i]}
		for j := 1; j < len(at); j++ {
			st[j-1] = append(st[j-1], at[j].Sub(at[j-1]))
		}
		st[len(names)-4] = append(st[len(names)-4], at[len(at)-1].Sub(at[0]))
		st[len(names)-3] = append(st[len(names)-3], run.returned[i].Sub(run.committed[i]))
		st[len(names)-2] = append(st[len(names)-2], run.visible[i].Sub(run.committed[i]))
		st[len(names)-1] = append(st[len(names)-1], n[0].Sub(run.visible[i]))
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s, commits %d-%d (%d traced), ms:", view, lo+1, hi, len(st[0]))
	for i, name := range names {
		slices.Sort(st[i])
		fmt.Fprintf(&sb, "\n  %-20s p50 %7.2f  p99 %7.2f", name, pct(st[i], 50), pct(st[i], 99))
	}
	return sb.String()
}

// logStages logs the stages of the first and last k commits of run.
func (t *maintTrace) logStages(tb testing.TB, run maintRun, k int) {
	tb.Helper()
	if t == nil {
		return
	}
	n := len(run.versions)
	for _, view := range freshViews {
		tb.Log(t.stages(run, view, 0, k))
		tb.Log(t.stages(run, view, n-k, n))
	}
}
