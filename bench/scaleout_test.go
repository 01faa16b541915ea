package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mvd-project/mvd/internal/natstest"
	"github.com/mvd-project/mvd/internal/scaleout"
	"github.com/mvd-project/mvd/stream"
)

// Issue 23's scale-out figures (bench/README.md, "Scale-out"): each
// benchmark runs real processes on 127.0.0.1 (a 3-node NATS cluster, the
// S3 endpoint in this process, `mvd serve` instances of the binary built
// here, LanceDB writing) and reports what it measured; what must hold is
// checked as in TestScaleOut, the bounds of the issue included.

// benchEnvInt reads an integer setting of these benchmarks.
func benchEnvInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// scaleOutConfig is the workload of the scale-out benchmarks.
func scaleOutConfig(sources, views int) scaleout.Config {
	return scaleout.Config{
		Sources:        benchEnvInt("MVD_BENCH_SCALE_SOURCES", sources),
		ViewsPerSource: benchEnvInt("MVD_BENCH_SCALE_VIEWS", views),
		Gap:            time.Duration(benchEnvInt("MVD_BENCH_SCALE_GAP_MS", 20)) * time.Millisecond,
		Local:          !scaleout.ServeOnS3 || os.Getenv("MVD_BENCH_SCALE_LOCAL") != "",
	}
}

// BenchmarkScaleOutRefreshRate measures refreshes per second on a fixed
// many-view workload (4 sources × 8 views, LanceDB committing to the sources
// in turn as fast as it can) with 1, 2 and 3 instances: view commits and
// view steps (source versions the watermarks advanced, summed over the
// views) per second over a 20 s window, and how far behind the views were
// at its end.
func BenchmarkScaleOutRefreshRate(b *testing.B) {
	bin := buildMVD(b)
	window := time.Duration(benchEnvInt("MVD_BENCH_SCALE_WINDOW_S", 20)) * time.Second
	for _, n := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			ctx := context.Background()
			nats := scaleout.StartNATS(b, 3)
			c := scaleout.Start(b, scaleOutConfig(4, 8), bin, nats)
			if _, err := c.StartInstances(ctx, n); err != nil {
				b.Fatal(err)
			}
			w := c.StartWriter()
			if err := c.WarmUp(ctx, w, 60*time.Second); err != nil {
				b.Fatal(err)
			}
			tp, err := c.Measure(ctx, w, window)
			if err != nil {
				b.Fatal(err)
			}
			w.Stop()
			b.Logf("%d instances, %d views: %v", n, len(c.Views), tp)
			b.ReportMetric(tp.CommitsPerSecond(), "view-commits/s")
			b.ReportMetric(tp.StepsPerSecond(), "view-steps/s")
			b.ReportMetric(float64(tp.Behind), "steps-behind")
			if err := c.Converge(ctx, 120*time.Second); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkScaleOut is the long form of TestScaleOut: 4 sources × 4
// views, 3 instances; MVD_BENCH_SCALE_KILLS (5) times an instance is killed
// with SIGKILL while LanceDB writes (and a new one started in its place),
// then the NATS meta leader is killed (and restarted), the writes going on
// for seconds between the faults; the views converge and no source step is
// ever committed twice. It reports failover time (kill → every view of the
// killed instance refreshed past the next source commit) p50 and max over
// every view of every kill.
func BenchmarkScaleOut(b *testing.B) {
	ctx := context.Background()
	bin := buildMVD(b)
	nats := scaleout.StartNATS(b, 3)
	cfg := scaleOutConfig(4, 4)
	cfg.Gap = time.Duration(benchEnvInt("MVD_BENCH_SCALE_GAP_MS", 50)) * time.Millisecond
	c := scaleout.Start(b, cfg, bin, nats)
	if _, err := c.StartInstances(ctx, 3); err != nil {
		b.Fatal(err)
	}
	sub, err := c.Subscribe(ctx)
	if err != nil {
		b.Fatal(err)
	}
	w := c.StartWriter()
	if err := c.WarmUp(ctx, w, 60*time.Second); err != nil {
		b.Fatal(err)
	}
	soak := time.Duration(benchEnvInt("MVD_BENCH_SCALE_SOAK_S", 5)) * time.Second
	var all, perKill []time.Duration
	for k := range benchEnvInt("MVD_BENCH_SCALE_KILLS", 5) {
		pause(ctx, soak)
		f, err := c.KillOwner(ctx, w)
		if err != nil {
			b.Errorf("kill %d (%s): %v", k+1, f.Instance, err)
		}
		for _, d := range f.Times {
			all = append(all, d)
		}
		perKill = append(perKill, f.Max())
		b.Logf("kill %d: -9 %s, its %d views refreshed past the next commit within %v", k+1, f.Instance, len(f.Views), f.Max())
		if _, err := c.StartInstances(ctx, 1); err != nil {
			b.Fatal(err)
		}
	}
	pause(ctx, soak)
	l, err := c.KillMetaLeader(ctx, w, sub)
	if err != nil {
		b.Errorf("after kill -9 of the NATS meta leader (n%d): %v", l.Node, err)
	}
	b.Logf("NATS meta leader n%d killed: refreshed within %v, notified within %v", l.Node, maxOf(l.Refreshed), maxOf(l.Notified))
	pause(ctx, soak)
	if err := nats.Restart(ctx, l.Node); err != nil {
		b.Fatal(err)
	}
	pause(ctx, soak)
	w.Stop()
	if err := w.Err(); err != nil {
		b.Fatal(err)
	}
	if err := c.Converge(ctx, 120*time.Second); err != nil {
		b.Error(err)
	}
	sizes, err := c.ManifestSizes(ctx)
	if err != nil {
		b.Error(err)
	}
	b.Logf("latest manifest sizes (bytes): %v", sizes)
	versions := 0
	for _, v := range c.Views {
		steps, err := c.CheckHistory(v.Name)
		if err != nil {
			b.Error(err)
		}
		versions += len(steps)
	}
	if err := sub.Err(); err != nil {
		b.Error(err)
	}
	b.Logf("%d source commits, %d view versions checked; failover p50 %v, max %v over %d views of %d kills",
		len(w.Commits()), versions, scaleout.Percentile(all, 50), scaleout.Percentile(all, 100), len(all), len(perKill))
	b.ReportMetric(scaleout.Percentile(all, 50).Seconds()*1000, "failover-p50-ms")
	b.ReportMetric(scaleout.Percentile(all, 100).Seconds()*1000, "failover-max-ms")
	b.ReportMetric(maxOf(l.Refreshed).Seconds()*1000, "nats-loss-refresh-ms")
	b.ReportMetric(maxOf(l.Notified).Seconds()*1000, "nats-loss-notify-ms")
}

// pause lets the writer run for d.
func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func maxOf(m map[string]time.Duration) time.Duration {
	var out time.Duration
	for _, d := range m {
		out = max(out, d)
	}
	return out
}

// BenchmarkLeaseRenewals measures what bounds the lease traffic of a large
// deployment (docs/scale-out.md): renewals (a KV Update at the revision
// last written, as package cluster renews a lease) of 2,000 keys in an R3
// bucket on the 3-node cluster, 64 at a time from one connection, for 10 s.
// It reports renewals per second and their latency (p50, p99).
func BenchmarkLeaseRenewals(b *testing.B) {
	ctx := context.Background()
	nc := scaleout.StartNATS(b, 3)
	nconn, err := nats.Connect(strings.Join(nc.URLs(), ","))
	if err != nil {
		b.Fatal(err)
	}
	defer nconn.Close()
	js, err := jetstream.New(nconn)
	if err != nil {
		b.Fatal(err)
	}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "LEASES", Replicas: 3, TTL: 3 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	const keys, workers = 2000, 64
	revs := make([]uint64, keys)
	for i := range keys {
		if revs[i], err = kv.Create(ctx, fmt.Sprintf("lease.view.v%d", i), []byte(`{"instance":"i1"}`)); err != nil {
			b.Fatal(err)
		}
	}
	window := time.Duration(benchEnvInt("MVD_BENCH_LEASE_WINDOW_S", 10)) * time.Second
	deadline := time.Now().Add(window)
	lat := make([][]time.Duration, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			// Worker w renews keys w, w+workers, …: one renewer per key.
			for k := w; time.Now().Before(deadline); k += workers {
				if k >= keys {
					k = w
				}
				t := time.Now()
				rev, err := kv.Update(ctx, fmt.Sprintf("lease.view.v%d", k), []byte(`{"instance":"i1"}`), revs[k])
				if err != nil {
					errs[w] = err
					return
				}
				revs[k] = rev
				lat[w] = append(lat[w], time.Since(t))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	rate := float64(len(all)) / elapsed.Seconds()
	b.Logf("%d renewals of %d R3 keys in %v: %.0f/s, p50 %v, p99 %v", len(all), keys, elapsed.Round(time.Millisecond), rate,
		scaleout.Percentile(all, 50), scaleout.Percentile(all, 99))
	b.ReportMetric(rate, "renewals/s")
	b.ReportMetric(float64(scaleout.Percentile(all, 50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(scaleout.Percentile(all, 99).Microseconds())/1000, "p99-ms")
}

// BenchmarkViewConsumers measures the other JetStream cost of many views
// (docs/scale-out.md): every view has a durable consumer on the change-set
// stream, replicated as the stream is (R3 on the cluster). It creates
// MVD_BENCH_CONSUMERS (1,000) of them through stream.Conn.ViewConsumer on
// the 3-node cluster and reports creations per second and the nodes'
// memory (nats-server's /varz mem) before and after.
func BenchmarkViewConsumers(b *testing.B) {
	ctx := context.Background()
	cl := natstest.Start(b, 3)
	conn, err := stream.Connect(ctx, stream.ConnectOptions{URL: cl.URLs(), Subjects: stream.Subjects{Prefix: "bench"}})
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	if err := conn.EnsureStreams(ctx); err != nil {
		b.Fatal(err)
	}
	mem := func() (total int64) {
		for i := range cl.Size() {
			var v struct {
				Mem int64 `json:"mem"`
			}
			resp, err := http.Get(cl.MonitorURL(i) + "/varz")
			if err != nil {
				b.Fatal(err)
			}
			err = json.NewDecoder(resp.Body).Decode(&v)
			resp.Body.Close()
			if err != nil {
				b.Fatal(err)
			}
			total += v.Mem
		}
		return total
	}
	n := benchEnvInt("MVD_BENCH_CONSUMERS", 1000)
	before := mem()
	start := time.Now()
	for i := range n {
		if _, err := conn.ViewConsumer(ctx, fmt.Sprintf("v%d", i), fmt.Sprintf("s%d", i%100), stream.ConsumerConfig{}); err != nil {
			b.Fatalf("consumer %d: %v", i, err)
		}
	}
	elapsed := time.Since(start)
	after := mem()
	perConsumer := float64(after-before) / float64(n) / 3
	b.Logf("%d R3 view consumers created in %v (%.0f/s); nats-server memory of the 3 nodes %d MB -> %d MB (%.1f KB per consumer per node)",
		n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), before>>20, after>>20, perConsumer/1024)
	b.ReportMetric(float64(n)/elapsed.Seconds(), "consumers/s")
	b.ReportMetric(perConsumer/1024, "KB/consumer/node")
}
