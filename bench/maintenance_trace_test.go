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
//	published→started   delivery to the view's owner, its wait, and within it
//	published→woken     to the owner's wake-up by the delivery (NATS)
//	started→committed   the refresh
//	committed→arrived   the notification, to the subscriber

// maintTrace keeps the trace lines, by source version, and the
// maintenance steps.
type maintTrace struct {
	mu        sync.Mutex
	noticed   map[uint64][2]time.Time            // noticed, published
	refreshed map[string]map[uint64][4]time.Time // view → source version → started, committed, woken, notified
	steps     map[string][]maintStep             // view → its maintenance steps
}

// maintStep is one compaction or cleanup step: when it was logged (its
// end) and how long it took.
type maintStep struct {
	kind string
	at   time.Time
	took time.Duration
}

func newMaintTrace() *maintTrace {
	return &maintTrace{noticed: map[uint64][2]time.Time{}, refreshed: map[string]map[uint64][4]time.Time{}, steps: map[string][]maintStep{}}
}

// Enabled implements slog.Handler: debug and up.
func (t *maintTrace) Enabled(context.Context, slog.Level) bool { return true }

// WithAttrs implements slog.Handler: a view owner's logger (its "view"
// attribute) gets a handler that names the view.
func (t *maintTrace) WithAttrs(as []slog.Attr) slog.Handler {
	for _, a := range as {
		if a.Key == "view" {
			return viewTrace{t, a.Value.String()}
		}
	}
	return t
}

// WithGroup implements slog.Handler.
func (t *maintTrace) WithGroup(string) slog.Handler { return t }

// viewTrace is a view owner's handler: it keeps the view's maintenance
// steps.
type viewTrace struct {
	*maintTrace
	view string
}

// Handle implements slog.Handler.
func (v viewTrace) Handle(ctx context.Context, r slog.Record) error {
	if r.Message != "compacted" && r.Message != "cleaned up versions" {
		return v.maintTrace.Handle(ctx, r)
	}
	st := maintStep{kind: r.Message, at: r.Time}
	r.Attrs(func(at slog.Attr) bool {
		if at.Key == "took" {
			st.took = at.Value.Duration()
		}
		return true
	})
	v.mu.Lock()
	defer v.mu.Unlock()
	v.steps[v.view] = append(v.steps[v.view], st)
	return nil
}

// Handle implements slog.Handler: it keeps the two trace lines.
func (t *maintTrace) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "change set published" && r.Message != "refresh notified" {
		return nil
	}
	var (
		view, mode       string
		version          uint64
		a, b, c, d, w, p time.Time
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
		case "woken_at":
			w = at.Value.Time()
		case "mode":
			mode = at.Value.String()
		case "notified_at":
			p = at.Value.Time()
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
		t.refreshed[view] = map[uint64][4]time.Time{}
	}
	if _, ok := t.refreshed[view][version]; ok && mode == "no_op" {
		return nil // a later refresh that found nothing to do: not the one that served the commit
	}
	t.refreshed[view][version] = [4]time.Time{c, d, w, p}
	return nil
}

// stages splits the freshness of view over the commits [lo, hi) of run.
func (t *maintTrace) stages(run maintRun, view string, lo, hi int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	// The first five stages follow each other (at below); the rest are
	// spans across them, at the indices named after them.
	names := []string{"committed→noticed", "noticed→published", "published→started", "started→committed", "committed→arrived", "total", "(committed→returned)", "(committed→appeared)", "(appeared→noticed)", "(published→woken)", "(committed→notified)"}
	const (
		total = 5 + iota
		returned
		appeared
		noticed
		woken
		notified
	)
	st := make([][]time.Duration, len(names))
	byKind := map[string][]time.Duration{} // started→committed by commitKind
	for i := lo; i < hi && i < len(run.versions); i++ {
		v := run.versions[i]
		n, ok1 := t.noticed[v]
		r, ok2 := t.refreshed[view][v]
		if !ok1 || !ok2 {
			continue // coalesced into a later version's refresh
		}
		byKind[commitKind(i)] = append(byKind[commitKind(i)], r[1].Sub(r[0]))
		at := []time.Time{run.committed[i], n[0], n[1], r[0], r[1], run.arrived[view][i]}
		for j := 1; j < len(at); j++ {
			st[j-1] = append(st[j-1], at[j].Sub(at[j-1]))
		}
		st[total] = append(st[total], at[len(at)-1].Sub(at[0]))
		st[returned] = append(st[returned], run.returned[i].Sub(run.committed[i]))
		st[appeared] = append(st[appeared], run.visible[i].Sub(run.committed[i]))
		st[noticed] = append(st[noticed], n[0].Sub(run.visible[i]))
		if !r[2].IsZero() {
			st[woken] = append(st[woken], r[2].Sub(n[1]))
		}
		if !r[3].IsZero() {
			st[notified] = append(st[notified], r[3].Sub(r[1]))
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s, commits %d-%d (%d traced), ms:", view, lo+1, hi, len(st[0]))
	for i, name := range names {
		slices.Sort(st[i])
		fmt.Fprintf(&sb, "\n  %-20s p50 %7.2f  p99 %7.2f", name, pct(st[i], 50), pct(st[i], 99))
	}
	for _, kind := range []string{"append", "delete", "update"} {
		d := byKind[kind]
		slices.Sort(d)
		fmt.Fprintf(&sb, "\n  %-20s p50 %7.2f  max %7.2f  (%d commits)", "(refresh, "+kind+")", pct(d, 50), pct(d, 100), len(d))
	}
	// The maintenance steps that ended while these commits were made.
	if lo < len(run.committed) && hi-1 < len(run.arrived[view]) {
		from, to := run.committed[lo], run.arrived[view][hi-1]
		took := map[string][]time.Duration{}
		for _, s := range t.steps[view] {
			if !s.at.Before(from) && !s.at.After(to) {
				took[s.kind] = append(took[s.kind], s.took)
			}
		}
		for _, kind := range []string{"compacted", "cleaned up versions"} {
			d := took[kind]
			slices.Sort(d)
			var sum time.Duration
			for _, x := range d {
				sum += x
			}
			fmt.Fprintf(&sb, "\n  %-20s %d steps, %.1f ms in all, p50 %.2f max %.2f", kind, len(d), float64(sum.Microseconds())/1000, pct(d, 50), pct(d, 100))
		}
	}
	return sb.String()
}

// correctAppeared moves each commit's appearance back to the watcher's
// noticing it where that came first (the bench's own inotify reader can
// be scheduled after the daemon's: the manifest had appeared by the time
// either saw it), and recomputes the freshness from the appearance.
func (t *maintTrace) correctAppeared(run *maintRun) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, v := range run.versions {
		if n, ok := t.noticed[v]; ok && n[0].Before(run.visible[i]) {
			run.visible[i] = n[0]
		}
	}
	for _, view := range freshViews {
		for i := range run.fromVisible[view] {
			if i < len(run.visible) && i < len(run.arrived[view]) {
				run.fromVisible[view][i] = run.arrived[view][i].Sub(run.visible[i])
			}
		}
	}
}

// logStages logs the stages of the first and last k commits of run.
func (t *maintTrace) logStages(tb testing.TB, run maintRun, k int) {
	tb.Helper()
	if t == nil {
		return
	}
	n := len(run.versions)
	for _, view := range freshViews {
		note(tb, "%s", t.stages(run, view, 0, k))
		note(tb, "%s", t.stages(run, view, n-k, n))
	}
	for _, view := range freshViews {
		note(tb, "%s", t.slowest(run, view, 0, k, slowestShown))
		note(tb, "%s", t.slowest(run, view, n-k, n, slowestShown))
	}
}

// slowestShown is how many of a window's slowest commits the trace lists:
// the p99 of 500 commits is the fifth slowest.
const slowestShown = 6

// slowest lists the m slowest commits of view among [lo, hi) of run (from
// the manifest's appearance to the notification's arrival), each with its
// stages and the maintenance steps of any view that overlapped it: what
// a window's p99 is made of.
func (t *maintTrace) slowest(run maintRun, view string, lo, hi, m int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	type commit struct {
		i     int
		total time.Duration
	}
	var cs []commit
	for i := lo; i < hi && i < len(run.versions) && i < len(run.arrived[view]); i++ {
		cs = append(cs, commit{i, run.arrived[view][i].Sub(run.visible[i])})
	}
	slices.SortFunc(cs, func(a, b commit) int { return int(b.total - a.total) })
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }
	mono := monoOffset()
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s, commits %d-%d, the %d slowest from the manifest's appearance, ms (appeared→noticed→published→woken→started→committed→arrived; @ the appearance on CLOCK_MONOTONIC, as `perf trace -T` prints it, in ms):", view, lo+1, hi, min(m, len(cs)))
	for _, c := range cs[:min(m, len(cs))] {
		v := run.versions[c.i]
		n, r := t.noticed[v], t.refreshed[view][v]
		from, to := run.visible[c.i], run.arrived[view][c.i]
		fmt.Fprintf(&sb, "\n  #%d %s %s", c.i+1, commitKind(c.i), ms(c.total))
		if mono != 0 {
			fmt.Fprintf(&sb, " @%.3f", float64(from.UnixNano()+int64(mono))/1e6)
		}
		sb.WriteString(":")
		if !n[0].IsZero() && !r[0].IsZero() {
			at := []time.Time{from, n[0], n[1], r[2], r[0], r[1], to}
			for j := 1; j < len(at); j++ {
				if at[j].IsZero() || at[j-1].IsZero() || at[j].Before(at[j-1]) {
					sb.WriteString(" ?") // unknown, or another refresh's (coalesced)
					continue
				}
				sb.WriteString(" " + ms(at[j].Sub(at[j-1])))
			}
		} else {
			sb.WriteString(" (coalesced)")
		}
		for _, name := range freshViews {
			for _, st := range t.steps[name] {
				if st.at.After(from) && st.at.Add(-st.took).Before(to) {
					fmt.Fprintf(&sb, "; %s %s %s", name, st.kind, ms(st.took))
				}
			}
		}
	}
	return sb.String()
}
