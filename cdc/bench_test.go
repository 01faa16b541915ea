package cdc

import (
	"context"
	"slices"
	"testing"
	"time"
)

// BenchmarkNoticeLatency measures the time from a commit returning (mvd's
// writer) to its KindVersion event, per mode; p50 and p99 are reported.
func BenchmarkNoticeLatency(b *testing.B) {
	for _, mode := range []Mode{ModeNotify, ModePoll} {
		b.Run(mode.String(), func(b *testing.B) {
			dir := b.TempDir()
			root := createTable(b, dir, "src", 1, false)
			w, err := New(Options{Dir: dir, Mode: mode, Logger: quietLog})
			if err != nil {
				b.Fatal(err)
			}
			w.Watch("src", 0)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- w.Run(ctx) }()
			defer func() { cancel(); <-done }()
			for ev := range w.Events() {
				if ev.Kind == KindSynced {
					break
				}
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				v := appendRows(b, root, int64(i), int64(i)+1)
				committed := time.Now()
				for ev := range w.Events() {
					if ev.Kind == KindVersion && ev.To == v {
						lat = append(lat, time.Since(committed))
						break
					}
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// BenchmarkCatchUp measures how fast a backlog of versions is reported:
// 500 single-row appends, watched from version 1 (each op reports all).
func BenchmarkCatchUp(b *testing.B) {
	dir := b.TempDir()
	root := createTable(b, dir, "src", 1, false)
	const n = 500
	for i := 0; i < n; i++ {
		appendRows(b, root, int64(i), int64(i)+1)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w, err := New(Options{Dir: dir, Mode: ModePoll, Logger: quietLog, Buffer: 1024})
		if err != nil {
			b.Fatal(err)
		}
		w.Watch("src", 1)
		w.applyRequests(nil)
		go func() {
			if err := w.scanAll(context.Background(), false); err != nil {
				panic(err)
			}
			close(w.events)
		}()
		got := 0
		for ev := range w.Events() {
			if ev.Kind == KindVersion {
				got++
			}
		}
		if got != n {
			b.Fatalf("%d versions reported, want %d", got, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/version")
}
