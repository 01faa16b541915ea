package wire

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/stream"
)

// serveFor starts the serve process on dir with a view "v" over events
// and a subscriber; it returns the notifications channel.
func serveFor(b *testing.B, dir string) (<-chan *stream.RefreshNotification, *daemon.Metrics) {
	ctx := context.Background()
	db, err := matview.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	sel, _ := plan.ParseSelect("id")
	if _, err := db.CreateView(ctx, "v", "events", matview.Definition{Select: sel}); err != nil {
		b.Fatal(err)
	}
	db.Close()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	daemon.BindCommandFlags(fs)
	_ = fs.Parse([]string{"--db", dir, "--admin-addr", "127.0.0.1:0"})
	cfg, err := daemon.LoadConfig(fs, nil)
	if err != nil {
		b.Fatal(err)
	}
	deps, err := Deps(cfg, quietLog)
	if err != nil {
		b.Fatal(err)
	}
	srv := daemon.NewServer(cfg, deps)
	drain, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Run(drain, context.Background()) }()
	<-srv.Started()
	for ok, _ := srv.Ready(); !ok; ok, _ = srv.Ready() {
		time.Sleep(time.Millisecond)
	}
	info := srv.Info()
	conn, err := stream.Connect(ctx, stream.ConnectOptions{URL: info.NATSURL, Token: info.Token})
	if err != nil {
		b.Fatal(err)
	}
	sub, err := conn.SubscribeRefreshes(ctx, "v")
	if err != nil {
		b.Fatal(err)
	}
	out := make(chan *stream.RefreshNotification, 4096)
	subCtx, subStop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			n, err := sub.Next(subCtx)
			if subCtx.Err() != nil {
				return
			}
			if err == nil {
				out <- n
			}
		}
	}()
	b.Cleanup(func() {
		subStop()
		wg.Wait()
		conn.Close()
		stop()
		<-done
		deps.Close()
	})
	return out, srv.Metrics()
}

// meanRefreshMS is the mean duration of the view's refreshes so far.
func meanRefreshMS(b *testing.B, m *daemon.Metrics) float64 {
	mfs, err := m.Registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	var sum float64
	var n uint64
	for _, mf := range mfs {
		if mf.GetName() != "mvd_refresh_duration_seconds" {
			continue
		}
		for _, mt := range mf.GetMetric() {
			sum += mt.GetHistogram().GetSampleSum()
			n += mt.GetHistogram().GetSampleCount()
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n) * 1000
}

// BenchmarkFreshness: single-row commits by LanceDB every 50 ms; the time
// from a commit returning to the refresh notification that covers it, at
// a subscriber (p50/p99 over the commits).
func BenchmarkFreshness(b *testing.B) {
	const commits = 200
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		ctx := context.Background()
		w, err := lancedbtest.StartFreshnessWriter(ctx, lancedbtest.HarnessDir(b), lancedbtest.WriterOptions{Dir: dir, Create: 10000, Commits: commits, Gap: 50 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		notes, metrics := serveFor(b, dir)
		if err := w.Start(); err != nil {
			b.Fatal(err)
		}
		returned := map[uint64]time.Time{}
		var lat []time.Duration
		var refreshes int
		pending := []uint64{}
		commitsCh := w.Commits()
		for seen := 0; seen < commits; {
			select {
			case c, ok := <-commitsCh:
				if !ok {
					commitsCh = nil
					continue
				}
				returned[c.Version] = c.Returned
				pending = append(pending, c.Version)
			case n := <-notes:
				refreshes++
				at := time.Now()
				keep := pending[:0]
				for _, v := range pending {
					if v <= n.SourceVersion {
						lat = append(lat, at.Sub(returned[v]))
						seen++
					} else {
						keep = append(keep, v)
					}
				}
				pending = keep
			case <-time.After(30 * time.Second):
				b.Fatalf("stalled after %d commits seen", seen)
			}
		}
		if _, err := w.Wait(); err != nil {
			b.Fatal(err)
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(refreshes), "refreshes")
		b.ReportMetric(meanRefreshMS(b, metrics), "refresh-mean-ms")
	}
}

// BenchmarkBurst: 1,000 commits as fast as LanceDB makes them; how long
// after the last one returns the view reflects it, and how many refreshes
// served the 1,000 commits.
func BenchmarkBurst(b *testing.B) {
	const commits = 1000
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		ctx := context.Background()
		w, err := lancedbtest.StartFreshnessWriter(ctx, lancedbtest.HarnessDir(b), lancedbtest.WriterOptions{Dir: dir, Create: 10000, Commits: commits, Burst: true})
		if err != nil {
			b.Fatal(err)
		}
		notes, metrics := serveFor(b, dir)
		if err := w.Start(); err != nil {
			b.Fatal(err)
		}
		var last lancedbtest.Commit
		for c := range w.Commits() {
			last = c
		}
		refreshes := 0
		for {
			n := <-notes
			refreshes++
			if n.SourceVersion >= last.Version {
				b.ReportMetric(float64(time.Since(last.Returned).Microseconds())/1000, "converged-after-last-ms")
				break
			}
		}
		b.ReportMetric(float64(refreshes), "refreshes")
		b.ReportMetric(meanRefreshMS(b, metrics), "refresh-mean-ms")
	}
}
