package lancedbtest

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestEventsWorkload(t *testing.T) {
	d := StartDriver(t, t.TempDir())
	info := must(d.CreateEvents("events", 2500, 1000, 1))
	if info.Commits != 3 || info.Version != 3 || info.Rows != 2500 {
		t.Fatalf("create events: %+v", info)
	}
	sc := must(d.Schema("events", 0))
	want := EventsSchema()
	if len(sc.Fields) != len(want.Fields) {
		t.Fatalf("schema %+v", sc)
	}
	for i, f := range want.Fields {
		if g := sc.Fields[i]; g.Name != f.Name || g.Type != f.Type || g.Nullable != f.Nullable {
			t.Errorf("field %d: %+v, want %+v", i, g, f)
		}
	}
	// The Go view specs are the ones bench_views.mjs gives LanceDB.
	var js map[string]map[string]any
	if err := d.Call("event_views", nil, &js); err != nil {
		t.Fatal(err)
	}
	for _, name := range EventViewNames {
		goDef := must(d.CreateView(name, "events", EventViews()[name]))
		jsDef := must(d.CreateViewRaw("js"+name, "events", js[name]))
		if a, b := must(jsonText(goDef)), must(jsonText(jsDef)); a != b {
			t.Errorf("%s: Go spec %s, bench_views.mjs %s", name, a, b)
		}
		s := must(d.MeasureRefresh(name, RefreshOptions{}))
		if s.Mode != "rebuild" || s.ViewVersions != 2 || s.MS <= 0 || s.PeakRSSKB == 0 {
			t.Errorf("%s first refresh %+v", name, s)
		}
		if err := d.CheckView(name, s.SourceVersion); err != nil {
			t.Error(err)
		}
	}
	// V1 holds about 11% of the rows (purchase and amount > 10); V3 is capped.
	if n := must(d.Count("V1", 0)); math.Abs(float64(n)/2500-0.1125) > 0.03 {
		t.Errorf("V1 holds %d of 2500 rows", n)
	}
	if n := must(d.Count("V3", 0)); n == 0 || n > 1000 {
		t.Errorf("V3 holds %d rows", n)
	}
	must(d.AppendEvents("events", 2500, 100, 1))
	for _, name := range EventViewNames {
		s := must(d.MeasureRefresh(name, RefreshOptions{}))
		if s.Mode != "incremental" || s.SourceVersion != 4 {
			t.Errorf("%s after append %+v", name, s)
		}
		if err := d.CheckView(name, s.SourceVersion); err != nil {
			t.Error(err)
		}
	}
	if s := must(d.MeasureRefresh("V2", RefreshOptions{})); s.Mode != "no_op" || s.ViewVersions != 0 {
		t.Errorf("no-op %+v", s)
	}
}

func TestViewBenchSmoke(t *testing.T) {
	Require(t)
	dir := t.TempDir()
	b, err := RunViewBench(t.Context(), HarnessDir(t), ViewBenchOptions{Dir: dir, Rows: 3000, Batch: 1000, Reps: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		// A second run reuses the table, restored to before the operations.
		again, err := RunViewBench(t.Context(), HarnessDir(t), ViewBenchOptions{Dir: dir, Rows: 3000, Batch: 1000, Reps: 1, Views: []string{"V3"}, Reuse: true})
		if err != nil {
			t.Fatal(err)
		}
		var create struct {
			Reused bool `json:"reused"`
		}
		if json.Unmarshal(again.Create, &create) != nil || !create.Reused || again.Initial["V3"].RowsWritten != b.Initial["V3"].RowsWritten {
			t.Errorf("reuse: create %s, initial %+v vs %+v", again.Create, again.Initial["V3"], b.Initial["V3"])
		}
	}()
	if b.LanceDB != "0.39.0" || b.Rows != 3000 || len(b.Ops) != 6 {
		t.Fatalf("report %+v", b)
	}
	for _, op := range []string{"update_1", "delete_1", "append_1", "append_100k", "no_op", "full"} {
		for _, v := range EventViewNames {
			s, ok := b.Summary[op][v]
			if !ok || s.MedianMS <= 0 || len(s.Modes) != 1 {
				t.Errorf("%s %s: %+v", op, v, s)
			}
		}
	}
	if m := b.Summary["no_op"]["V1"]; m.Modes[0] != "no_op" || m.ViewVersions != 0 {
		t.Errorf("no_op: %+v", m)
	}
	if m := b.Summary["full"]["V2"]; m.Modes[0] != "rebuild" || m.ViewVersions != 2 {
		t.Errorf("full: %+v", m)
	}
	// LanceDB rebuilds the limited view on any update.
	if m := b.Summary["update_1"]["V3"]; m.Modes[0] != "rebuild" {
		t.Errorf("update of V3: %+v", m)
	}
	if m := b.Summary["update_1"]["V1"]; m.Modes[0] != "incremental" {
		t.Errorf("update of V1: %+v", m)
	}
}

func TestFreshnessSmoke(t *testing.T) {
	Require(t)
	b, err := RunFreshnessBaseline(t.Context(), HarnessDir(t), FreshnessOptions{Dir: t.TempDir(), Rows: 100, Commits: 5, Gap: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if b.Mode != "tight_loop" || b.Seen != 5 || len(b.SamplesMS) != 5 || b.Refreshes < 1 || b.PollerCPUCores <= 0 || b.Latency.Max < b.Latency.P50 {
		t.Errorf("baseline %+v", b)
	}

	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	w, err := StartFreshnessWriter(ctx, HarnessDir(t), WriterOptions{Dir: dir, Create: 10, Commits: 3, Burst: true})
	if err != nil {
		t.Fatal(err)
	}
	if w.Version != 1 {
		t.Errorf("writer table at version %d", w.Version)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	var got []Commit
	for c := range w.Commits() {
		got = append(got, c)
	}
	sum, err := w.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Commits != 3 || len(got) != 3 {
		t.Fatalf("summary %+v, commits %+v", sum, got)
	}
	for i, c := range got {
		if c.Version != uint64(2+i) || time.Since(c.Returned) > time.Minute || c.Returned.After(time.Now()) {
			t.Errorf("commit %d: %+v", i, c)
		}
	}
	d := StartDriver(t, dir)
	if n := must(d.Count("events", 0)); n != 13 {
		t.Errorf("events holds %d rows", n)
	}

	// A LanceDB reader sees each new version of a table with its rows.
	watch, err := StartViewWatcher(ctx, HarnessDir(t), dir, "events", 0)
	if err != nil {
		t.Fatal(err)
	}
	if watch.Version != 4 || watch.Rows != 13 {
		t.Errorf("watcher starts at %+v", watch)
	}
	v := must(d.AppendEvents("events", 100, 2, 1))
	seen := <-watch.Seen()
	if seen.Version != v || seen.Rows != 15 || time.Since(seen.Seen) > time.Minute {
		t.Errorf("seen %+v after version %d", seen, v)
	}
	ws, err := watch.Stop()
	if err != nil || ws.Polls == 0 {
		t.Errorf("watch summary %+v, %v", ws, err)
	}
}
