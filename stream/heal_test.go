package stream

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDamagedStoreMovedAside: after a run that published change sets,
// one byte of the change-set stream's first message block is flipped
// (XOR 0x5a): the first record's length (byte 0) or byte 944, as in issue
// 24. nats-server 2.15.2 drops the damaged records when it restores the
// stream (a warning, "corrupt record state"), so the store reads back,
// stays, and works: the start is bounded and change sets flow again.
func TestDamagedStoreMovedAside(t *testing.T) {
	for _, tc := range []struct {
		at        int
		movedAway bool
	}{{0, false}, {944, false}} {
		t.Run(fmt.Sprint("byte", tc.at), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			dir := filepath.Join(t.TempDir(), "nats")
			s, err := StartServer(ctx, ServerConfig{StoreDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			c, err := Connect(ctx, s.ConnectOptions())
			if err != nil {
				t.Fatal(err)
			}
			if err := c.EnsureStreams(ctx); err != nil {
				t.Fatal(err)
			}
			for v := uint64(1); v < 20; v++ {
				if _, err := c.PublishChangeSet(ctx, step(v, []uint64{v, v + 100}, nil, nil)); err != nil {
					t.Fatal(err)
				}
			}
			c.Close()
			if err := s.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			blk := filepath.Join(dir, "jetstream", "$G", "streams", "MVD_CDC", "msgs", "1.blk")
			b, err := os.ReadFile(blk)
			if err != nil {
				t.Fatal(err)
			}
			b[tc.at] ^= 0x5a
			if err := os.WriteFile(blk, b, 0o600); err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			start := time.Now()
			s, err = StartServer(ctx, ServerConfig{StoreDir: dir, StartTimeout: 5 * time.Second,
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
			if err != nil {
				t.Fatalf("start on the damaged store: %v", err)
			}
			defer s.Shutdown(context.Background())
			t.Logf("started in %v", time.Since(start).Round(time.Millisecond))
			aside, _ := filepath.Glob(dir + ".corrupt-*")
			if moved := len(aside) == 1; moved != tc.movedAway || moved != strings.Contains(logs.String(), "moved aside") {
				t.Errorf("store moved aside: %v (want %v); log:\n%s", aside, tc.movedAway, logs.String())
			}
			c = connect(t, s.ConnectOptions())
			if err := c.EnsureStreams(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := c.PublishChangeSet(ctx, step(30, []uint64{1}, nil, nil)); err != nil {
				t.Fatal(err)
			}
			vc, err := c.ViewConsumer(ctx, "v", "events", ConsumerConfig{DeliverAll: true})
			if err != nil {
				t.Fatal(err)
			}
			batch, err := vc.Fetch(ctx, 100)
			if err != nil || batch.MaxTo() != 31 {
				t.Fatalf("fetch after the start: %v, %v; want the new change set", batch, err)
			}
		})
	}
}

// TestUnopenableStoreMovedAside: a store JetStream cannot open at all
// (its jetstream directory is a file) no longer stops the start: it is
// moved aside and the server starts on a new one.
func TestUnopenableStoreMovedAside(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "nats")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "jetstream"), []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	s, err := StartServer(ctx, ServerConfig{StoreDir: dir, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	defer s.Shutdown(context.Background())
	if aside, _ := filepath.Glob(dir + ".corrupt-*"); len(aside) != 1 || !strings.Contains(logs.String(), "moved aside") {
		t.Errorf("moved aside to %v; log:\n%s", aside, logs.String())
	}
	if err := connect(t, s.ConnectOptions()).EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
}
