package subscribe

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/mvd-project/mvd/internal/natstest"
	"github.com/mvd-project/mvd/stream"
)

// TestRunSurvivesNodeLoss: `mvd subscribe --nats-url U1,U2,U3 --json` on a
// three-node cluster prints {"subscribed":[]} and then every notification,
// and keeps printing after the node it is connected to is killed (kill -9):
// every notification published after the kill is printed, once.
func TestRunSurvivesNodeLoss(t *testing.T) {
	cl := natstest.Start(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pub, err := stream.Connect(ctx, stream.ConnectOptions{URL: cl.URLs(), Name: "publisher", ReconnectWait: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	if err := pub.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	publish := func(sv uint64) {
		t.Helper()
		n := &stream.RefreshNotification{View: "v", Source: "events", Mode: stream.ModeIncremental, RowsWritten: 1,
			SourceVersion: sv, Version: sv, LagMS: 1, CommittedAt: time.Now()}
		for {
			pctx, pcancel := context.WithTimeout(ctx, time.Second)
			err := pub.PublishRefresh(pctx, n)
			pcancel()
			if err == nil {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("publish %d: %v", sv, err)
			}
		}
	}

	out := &lockedBuffer{}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- Run(rctx, Options{NATSURL: cl.URLs(), JSON: true, Out: out, Poll: 20 * time.Millisecond})
	}()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	if l := waitLines(t, out, 1); l[0] != `{"subscribed":[],"all_views":true}` {
		t.Fatalf("first line %s", l[0])
	}
	publish(1)
	waitLines(t, out, 2)
	leader := cl.MetaLeader(t)
	on := cl.ConnectedNode("mvd subscribe")
	if on < 0 {
		t.Fatal("mvd subscribe's connection is on no node")
	}
	killed := time.Now()
	cl.Kill(on)
	publish(2)
	published := time.Since(killed)
	waitLines(t, out, 3)
	t.Logf("killed the subscriber's node %s (meta leader: %v): the next notification published after %v, printed after %v",
		cl.Name(on), on == leader, published.Round(time.Millisecond), time.Since(killed).Round(time.Millisecond))
	for sv := uint64(3); sv <= 5; sv++ {
		publish(sv)
	}
	lines := waitLines(t, out, 6)
	for i, l := range lines[1:] {
		var n stream.RefreshNotification
		if err := json.Unmarshal([]byte(l), &n); err != nil {
			t.Fatalf("line %d: %v: %s", i+2, err, l)
		}
		if n.SourceVersion != uint64(i+1) {
			t.Fatalf("line %d has source version %d, want %d; lines:\n%s", i+2, n.SourceVersion, i+1, fmt.Sprint(lines))
		}
	}
	// Nothing printed twice: a seventh line would be a duplicate.
	publish(6)
	if lines := waitLines(t, out, 7); len(lines) != 7 {
		t.Fatalf("%d lines after 6 notifications:\n%q", len(lines), lines)
	}
}
