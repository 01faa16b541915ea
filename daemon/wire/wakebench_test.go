package wire

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/stream"
)

// directBus hides a Bus's feeds: the daemon then wakes owners straight
// from the watcher (the path before per-view consumers).
type directBus struct{ daemon.Bus }

// BenchmarkWakePath isolates the wake-up path from refresh cost: single-
// row commits by mvd's writer every 5 ms, a refresher that commits
// nothing, and the time from a commit returning to the notification at a
// subscriber. "consumer" = the view's durable JetStream consumer wakes the
// owner (the default); "direct" = the watcher wakes it in-process.
func BenchmarkWakePath(b *testing.B) {
	for _, mode := range []string{"consumer", "direct"} {
		b.Run(mode, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				p50, p99 := wakePath(b, mode == "direct", 200)
				b.ReportMetric(p50, "p50-ms")
				b.ReportMetric(p99, "p99-ms")
			}
		})
	}
}

func wakePath(b *testing.B, direct bool, commits int) (p50, p99 float64) {
	cfg := testConfig(b)
	src := filepath.Join(cfg.DB, "src.lance")
	writeRows(b, src, 0, 3)
	writeRows(b, filepath.Join(cfg.DB, "v.lance"), 0, 1)
	deps, err := Deps(cfg, quietLog)
	if err != nil {
		b.Fatal(err)
	}
	defer deps.Close()
	deps.Catalog = oneView{spec: daemon.ViewSpec{Name: "v", Source: "src"}, r: latestRefresher{root: src}}
	if direct {
		deps.Bus = directBus{deps.Bus}
	}
	srv := daemon.NewServer(cfg, deps)
	drain, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(drain, context.Background()) }()
	defer func() { stop(); <-done }()
	<-srv.Started()
	for ok, _ := srv.Ready(); !ok; ok, _ = srv.Ready() {
		time.Sleep(time.Millisecond)
	}
	ctx := context.Background()
	info := srv.Info()
	conn, err := stream.Connect(ctx, stream.ConnectOptions{URL: info.NATSURL, Token: info.Token})
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	sub, err := conn.SubscribeRefreshes(ctx, "v")
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Close()
	var lat []time.Duration
	for i := 0; i < commits; i++ {
		time.Sleep(5 * time.Millisecond)
		v := writeRows(b, src, int64(10+i), int64(11+i))
		at := time.Now()
		nctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		for {
			n, err := sub.Next(nctx)
			if err != nil {
				cancel()
				b.Fatalf("commit %d: %v", v, err)
			}
			if n.SourceVersion >= v {
				break
			}
		}
		cancel()
		lat = append(lat, time.Since(at))
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100])
}
