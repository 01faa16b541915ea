package stream

import (
	"sort"
	"testing"
	"time"
)

// BenchmarkChangeSetToConsumer measures the stream's share of freshness:
// from PublishChangeSet being called to a waiting view consumer's Fetch
// returning it, then the ack, on the embedded server in-process. It
// reports p50/p99 of the publish-to-delivery time.
func BenchmarkChangeSetToConsumer(b *testing.B) {
	s, err := StartServer(b.Context(), ServerConfig{StoreDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Shutdown(b.Context())
	c, err := Connect(b.Context(), s.ConnectOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if err := c.EnsureStreams(b.Context()); err != nil {
		b.Fatal(err)
	}
	vc, err := c.ViewConsumer(b.Context(), "v", "events", ConsumerConfig{})
	if err != nil {
		b.Fatal(err)
	}
	type delivery struct {
		at  time.Time
		err error
	}
	got := make(chan delivery)
	go func() {
		for {
			batch, err := vc.Fetch(b.Context(), 100)
			if err != nil {
				got <- delivery{err: err}
				return
			}
			at := time.Now()
			if err := batch.Ack(b.Context()); err != nil {
				got <- delivery{err: err}
				return
			}
			got <- delivery{at: at}
		}
	}()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := c.PublishChangeSet(b.Context(), step(uint64(i+1), []uint64{uint64(i)}, nil, nil)); err != nil {
			b.Fatal(err)
		}
		d := <-got
		if d.err != nil {
			b.Fatal(d.err)
		}
		lat = append(lat, d.at.Sub(start))
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

// BenchmarkRefreshToSubscriber measures PublishRefresh to a subscriber in
// another connection (over TCP, as `mvd subscribe` is) receiving it.
func BenchmarkRefreshToSubscriber(b *testing.B) {
	s, err := StartServer(b.Context(), ServerConfig{StoreDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Shutdown(b.Context())
	pub, err := Connect(b.Context(), s.ConnectOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer pub.Close()
	if err := pub.EnsureStreams(b.Context()); err != nil {
		b.Fatal(err)
	}
	subc, err := Connect(b.Context(), ConnectOptions{URL: s.URL(), Token: s.Token()})
	if err != nil {
		b.Fatal(err)
	}
	defer subc.Close()
	sub, err := subc.SubscribeRefreshes(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Close()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := pub.PublishRefresh(b.Context(), refreshOf("v", uint64(i+1))); err != nil {
			b.Fatal(err)
		}
		if _, err := sub.Next(b.Context()); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
