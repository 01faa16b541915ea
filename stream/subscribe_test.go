package stream

import (
	"context"
	"errors"
	"testing"
	"time"
)

func refreshOf(view string, version uint64) *RefreshNotification {
	return &RefreshNotification{
		View: view, Source: "events", Mode: ModeIncremental, RowsWritten: 1, SourceVersion: version + 5,
		Version: version, LagMS: 3.1, CommittedAt: time.Now(),
	}
}

func next(t *testing.T, s *Subscription, d time.Duration) *RefreshNotification {
	t.Helper()
	ctx, cancel := context.WithTimeout(testCtx(t), d)
	defer cancel()
	n, err := s.Next(ctx)
	if err != nil {
		t.Fatalf("next notification: %v", err)
	}
	return n
}

func TestSubscribeViews(t *testing.T) {
	_, c := setup(t)
	ctx := testCtx(t)
	all, err := c.SubscribeRefreshes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	some, err := c.SubscribeRefreshes(ctx, "a", "odd.name *")
	if err != nil {
		t.Fatal(err)
	}
	defer some.Close()
	for i, view := range []string{"a", "b", "odd.name *", "created later"} {
		if err := c.PublishRefresh(ctx, refreshOf(view, uint64(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"a", "b", "odd.name *", "created later"} {
		if n := next(t, all, 5*time.Second); n.View != want {
			t.Fatalf("all views: got %q, want %q", n.View, want)
		}
	}
	for _, want := range []string{"a", "odd.name *"} {
		if n := next(t, some, 5*time.Second); n.View != want {
			t.Fatalf("some views: got %q, want %q", n.View, want)
		}
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if n, err := some.Next(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a notification of an unsubscribed view arrived: %+v, %v", n, err)
	}
	if err := some.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := some.Next(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("next after close: %v", err)
	}
}

func TestSubscribeReconnectsAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, ServerConfig{StoreDir: dir})
	pub := connect(t, tcpOptions(s))
	sub := connect(t, tcpOptions(s))
	ctx := testCtx(t)
	if err := pub.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	vc, err := pub.ViewConsumer(ctx, "v", "events", ConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	subscription, err := sub.SubscribeRefreshes(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	defer subscription.Close()
	if err := pub.PublishRefresh(ctx, refreshOf("v", 1)); err != nil {
		t.Fatal(err)
	}
	if n := next(t, subscription, 5*time.Second); n.Version != 1 {
		t.Fatalf("before restart: version %d", n.Version)
	}
	// A refresher waits for change sets when the server goes away: its
	// Fetch ends promptly with ErrUnavailable, not after heartbeats.
	fetched := make(chan error, 1)
	go func() {
		_, err := vc.Fetch(ctx, 10)
		fetched <- err
	}()
	waitFor(t, "the fetch to wait on the server", 5*time.Second, func() bool {
		info, err := vc.cons.Info(ctx)
		return err == nil && info.NumWaiting > 0
	})

	// The daemon restarts its embedded server on the same port and store.
	down := time.Now()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-fetched; !errors.Is(err, ErrUnavailable) {
		t.Fatalf("fetch in flight when the server went: %v, want ErrUnavailable", err)
	}
	if d := time.Since(down); d > 2*time.Second {
		t.Fatalf("fetch in flight took %v to notice the server was gone", d)
	}
	waitFor(t, "clients to notice the shutdown", 5*time.Second, func() bool { return !sub.Connected() && !pub.Connected() })
	if _, err := vc.Fetch(ctx, 10); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("fetch while down: %v, want ErrUnavailable", err)
	}
	startServer(t, ServerConfig{StoreDir: dir, Port: s.Port(), Token: s.Token()})
	waitFor(t, "clients to reconnect", 10*time.Second, func() bool { return sub.Connected() && pub.Connected() })

	// The subscription is re-established by the client; publish until it
	// is (its SUB may reach the server just after our first PUB).
	var got *RefreshNotification
	for version := uint64(2); got == nil; version++ {
		if err := pub.PublishRefresh(ctx, refreshOf("v", version)); err != nil {
			t.Fatalf("publish after restart: %v", err)
		}
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		got, _ = subscription.Next(short)
		cancel()
		if version > 100 {
			t.Fatal("the subscription did not come back after the server restart")
		}
	}
	// The durable consumer survived the restart; the change set published
	// now reaches it.
	publishSteps(t, pub, 1, 2)
	b, err := vc.Fetch(ctx, 10)
	if err != nil {
		t.Fatalf("fetch after restart: %v", err)
	}
	if len(b.ChangeSets) != 1 || b.ChangeSets[0].From != 1 {
		t.Fatalf("after restart: %d change sets", len(b.ChangeSets))
	}
	if err := b.Ack(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestDrain(t *testing.T) {
	s, _ := setup(t)
	c := connect(t, tcpOptions(s))
	sub, err := c.SubscribeRefreshes(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if err := c.Drain(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if c.Connected() {
		t.Fatal("connected after Drain")
	}
	if err := c.PublishRefresh(testCtx(t), refreshOf("v", 1)); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("publish after drain: %v", err)
	}
}

// A notification published after the server restarted but before the
// subscriber reconnected still reaches it: the subscription resumes after
// the last one it delivered.
func TestSubscribeMissesNothingAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, ServerConfig{StoreDir: dir})
	pub := connect(t, tcpOptions(s))
	slow := tcpOptions(s)
	slow.ReconnectWait = 1500 * time.Millisecond
	subConn := connect(t, slow)
	ctx := testCtx(t)
	if err := pub.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	sub, err := subConn.SubscribeRefreshes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if !sub.Resumable() {
		t.Fatal("subscription on a server with the refresh stream is not resumable")
	}
	if err := pub.PublishRefresh(ctx, refreshOf("v", 1)); err != nil {
		t.Fatal(err)
	}
	if n := next(t, sub, 5*time.Second); n.Version != 1 {
		t.Fatalf("version %d, want 1", n.Version)
	}
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "clients to notice", 5*time.Second, func() bool { return !pub.Connected() && !subConn.Connected() })
	startServer(t, ServerConfig{StoreDir: dir, Port: s.Port(), Token: s.Token()})
	waitFor(t, "the publisher to reconnect", 5*time.Second, pub.Connected)
	for v := uint64(2); v <= 3; v++ {
		if err := pub.PublishRefresh(ctx, refreshOf("v", v)); err != nil {
			t.Fatal(err)
		}
	}
	if subConn.Connected() {
		t.Skip("the subscriber reconnected before the publish; nothing to show")
	}
	for v := uint64(2); v <= 3; v++ {
		if n := next(t, sub, 10*time.Second); n.Version != v {
			t.Fatalf("after the restart got version %d, want %d", n.Version, v)
		}
	}
}

// Without the refresh stream (no daemon has created it, or no JetStream
// permission), a subscription still works, live only.
func TestSubscribeWithoutStream(t *testing.T) {
	s := startServer(t, ServerConfig{})
	c := connect(t, s.ConnectOptions())
	sub, err := c.SubscribeRefreshes(testCtx(t), "v")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if sub.Resumable() {
		t.Fatal("resumable without a stream")
	}
	data, err := EncodeRefresh(refreshOf("v", 4))
	if err != nil {
		t.Fatal(err)
	}
	subject, _ := c.subj.Refreshed("v")
	if err := c.nc.Publish(subject, data); err != nil {
		t.Fatal(err)
	}
	if n := next(t, sub, 5*time.Second); n.Version != 4 {
		t.Fatalf("version %d", n.Version)
	}
}

// TestLastRefresh: the newest notification kept for a view, nil for a
// view never notified.
func TestLastRefresh(t *testing.T) {
	ctx := testCtx(t)
	_, conn := setup(t)
	if n, err := conn.LastRefresh(ctx, "v"); n != nil || err != nil {
		t.Fatalf("never notified: %+v, %v", n, err)
	}
	for _, version := range []uint64{3, 4} {
		if err := conn.PublishRefresh(ctx, refreshOf("v", version)); err != nil {
			t.Fatal(err)
		}
	}
	if err := conn.PublishRefresh(ctx, refreshOf("w", 9)); err != nil {
		t.Fatal(err)
	}
	n, err := conn.LastRefresh(ctx, "v")
	if err != nil || n == nil || n.View != "v" || n.Version != 4 {
		t.Fatalf("last of v: %+v, %v", n, err)
	}
}

// TestRefreshPublishedAgainStoredOnce: a notification published again (a
// retry after a lost acknowledgement) is stored once; another one of the
// same view and version (a later failure) is not taken for it.
func TestRefreshPublishedAgainStoredOnce(t *testing.T) {
	ctx := testCtx(t)
	_, conn := setup(t)
	n := refreshOf("v", 3)
	later := *n
	later.CommittedAt = n.CommittedAt.Add(time.Millisecond)
	later.Error = "failed"
	for _, m := range []*RefreshNotification{n, n, &later} {
		if err := conn.PublishRefresh(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	st, err := conn.js.Stream(ctx, conn.subj.RefreshStream())
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 2 {
		t.Fatalf("refresh stream holds %d messages, want 2", info.State.Msgs)
	}
}
