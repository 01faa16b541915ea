package stream

import (
	"context"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

// testCtx is a context that ends with the test (and after 30s at most).
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// clusterCtx bounds a test on a real NATS cluster: longer than testCtx,
// since leader elections on a loaded 2-core machine take seconds each.
func clusterCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// startServer starts an embedded server in dir (a new temp dir if empty)
// and shuts it down with the test.
func startServer(t *testing.T, cfg ServerConfig) *Server {
	t.Helper()
	if cfg.StoreDir == "" {
		cfg.StoreDir = t.TempDir()
	}
	s, err := StartServer(testCtx(t), cfg)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s
}

// connect connects with o and closes the connection with the test.
func connect(t *testing.T, o ConnectOptions) *Conn {
	t.Helper()
	c, err := Connect(testCtx(t), o)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// tcpOptions connects to s over TCP (not in-process), as another process
// would.
func tcpOptions(s *Server) ConnectOptions {
	return ConnectOptions{URL: s.URL(), Token: s.Token(), ReconnectWait: 20 * time.Millisecond}
}

func bitmap(ids ...uint64) *roaring64.Bitmap { return roaring64.BitmapOf(ids...) }

// step is a one-version change set of source "events".
func step(from uint64, ins, upd, del []uint64) *ChangeSet {
	op := "append"
	return &ChangeSet{
		Source: "events", Incarnation: "inc1", From: from, To: from + 1, Op: op,
		Inserted: bitmap(ins...), Updated: bitmap(upd...), Deleted: bitmap(del...),
		SchemaFingerprint: "fp1", CommittedAt: time.Date(2026, 12, 1, 9, 0, int(from), 0, time.UTC),
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
