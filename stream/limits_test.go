package stream

import (
	"strings"
	"testing"
)

// TestStreamsFitSmallStore: the embedded server's store is capped at
// DefaultMaxStore (it fits on a disk with 300 MB free, and does not
// depend on the free space at start), and the default streams' reserved
// sizes fit in it; a change-set stream larger than the store is refused
// with JetStream's reservation error, as on a small disk before.
func TestStreamsFitSmallStore(t *testing.T) {
	if DefaultMaxStore > 300e6 || DefaultChangeSetMaxBytes+DefaultRefreshMaxBytes > DefaultMaxStore {
		t.Fatalf("defaults: store %d, streams %d + %d", DefaultMaxStore, DefaultChangeSetMaxBytes, DefaultRefreshMaxBytes)
	}
	s := startServer(t, ServerConfig{})
	if got := s.ns.JetStreamConfig().MaxStore; got != DefaultMaxStore {
		t.Errorf("JetStream max store %d, want %d", got, DefaultMaxStore)
	}
	c := connect(t, s.ConnectOptions())
	if err := c.EnsureStreams(testCtx(t)); err != nil {
		t.Fatalf("default streams in the default store: %v", err)
	}
	small := startServer(t, ServerConfig{MaxStore: 200 << 20})
	o := small.ConnectOptions()
	if err := connect(t, o).EnsureStreams(testCtx(t)); err != nil {
		t.Fatalf("default streams in a 200 MiB store: %v", err)
	}
	o.Streams.MaxBytes = 1 << 30 // the former default
	err := connect(t, o).EnsureStreams(testCtx(t))
	if err == nil || !strings.Contains(err.Error(), "insufficient storage") {
		t.Errorf("a 1 GiB stream in a 200 MiB store: %v, want JetStream's reservation error", err)
	}
}
