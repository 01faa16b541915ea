package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// Tracing one commit through the daemon. With MVD_FRESHNESS_TRACE set,
// BenchmarkFreshness runs `mvd serve` at debug level with JSON logs and
// reads two of its lines back: "change set published" (per source
// version: when the watcher woke up for it, when its change set was
// published) and "refresh notified" (per view refresh: when its first
// wake-up or delivery arrived, when the refresh started, when the view
// commit returned, when the notification was published). Matched with
// the writer's commit-returned time and the subscriber's arrival time,
// they split the gap phase's notify latency into stages:
//
//	commit returned → noticed (fsnotify, the watcher's look)
//	noticed → published (manifest read, change set, JetStream publish)
//	published → woken (consumer delivery to the view's owner)
//	woken → started (owner wake-up, debounce or burst wait, watermark)
//	started → view committed (the refresh itself)
//	view committed → notified (notification published)
//	notified → subscriber (delivery to the subscriber)

type tracePublished struct {
	To          uint64    `json:"to"`
	NoticedAt   time.Time `json:"noticed_at"`
	PublishedAt time.Time `json:"published_at"`
}

type traceRefresh struct {
	View            string    `json:"view"`
	SourceVersion   uint64    `json:"source_version"`
	WokenAt         time.Time `json:"woken_at"`
	StartedAt       time.Time `json:"started_at"`
	ViewCommittedAt time.Time `json:"view_committed_at"`
	NotifiedAt      time.Time `json:"notified_at"`
}

type serveTrace struct {
	published []tracePublished
	refreshes []traceRefresh
}

// readServeTrace reads the trace lines of a JSON serve log.
func readServeTrace(path string) (*serveTrace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t := &serveTrace{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var head struct {
			Msg string `json:"msg"`
		}
		if json.Unmarshal(line, &head) != nil {
			continue
		}
		switch head.Msg {
		case "change set published":
			var p tracePublished
			if json.Unmarshal(line, &p) == nil {
				t.published = append(t.published, p)
			}
		case "refresh notified":
			var r traceRefresh
			if json.Unmarshal(line, &r) == nil {
				t.refreshes = append(t.refreshes, r)
			}
		}
	}
	return t, sc.Err()
}

// traceStages splits the notify latency of view in phase p into stages.
func traceStages(t *serveTrace, p phase, view string) string {
	names := []string{"returned→noticed", "noticed→published", "published→woken", "woken→started", "started→committed", "committed→notified", "notified→subscriber", "total"}
	st := make([][]time.Duration, len(names))
	for i, c := range p.made {
		pi := slices.IndexFunc(t.published, func(x tracePublished) bool { return x.To >= c.Version })
		ri := slices.IndexFunc(t.refreshes, func(x traceRefresh) bool { return x.View == view && x.SourceVersion >= c.Version })
		if pi < 0 || ri < 0 || i >= len(p.arrived[view]) {
			continue
		}
		pub, ref := t.published[pi], t.refreshes[ri]
		if ref.WokenAt.IsZero() {
			ref.WokenAt = ref.StartedAt
		}
		at := []time.Time{c.Returned, pub.NoticedAt, pub.PublishedAt, ref.WokenAt, ref.StartedAt, ref.ViewCommittedAt, ref.NotifiedAt, p.arrived[view][i]}
		for j := 1; j < len(at); j++ {
			st[j-1] = append(st[j-1], at[j].Sub(at[j-1]))
		}
		st[len(names)-1] = append(st[len(names)-1], at[len(at)-1].Sub(at[0]))
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "trace of %s, %s (%d commits matched), ms:\n", p.name, view, len(st[0]))
	for i, n := range names {
		slices.Sort(st[i])
		fmt.Fprintf(&sb, "  %-22s p50 %7.2f  p90 %7.2f  p99 %7.2f  max %7.2f\n", n, pct(st[i], 50), pct(st[i], 90), pct(st[i], 99), pct(st[i], 100))
	}
	return sb.String()
}

// traceLog is where startServe keeps the serve log when tracing ("" no
// tracing).
func traceLog(tb testing.TB) string {
	if os.Getenv("MVD_FRESHNESS_TRACE") == "" {
		return ""
	}
	return tb.TempDir() + "/serve.json.log"
}
