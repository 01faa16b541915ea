package stream

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestCloseLogsNoWarning: closing or draining our own connection (a clean
// stop) is not a disconnection worth a warning; a server going away is.
func TestCloseLogsNoWarning(t *testing.T) {
	var logs lockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	s := startServer(t, ServerConfig{})
	o := tcpOptions(s)
	o.Logger = log
	c := connect(t, o)
	if err := c.Drain(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	c2 := connect(t, o)
	c2.Close()
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("a clean close logged a warning:\n%s", logs.String())
	}
	c3 := connect(t, o)
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the disconnection", 10*time.Second, func() bool { return !c3.Connected() })
	waitFor(t, "the warning", 10*time.Second, func() bool { return strings.Contains(logs.String(), `level=WARN msg="NATS disconnected"`) })
}
