package stream

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

func TestPublishDeduplicates(t *testing.T) {
	s := startServer(t, ServerConfig{})
	c := connect(t, s.ConnectOptions())
	ctx := testCtx(t)
	if err := c.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	// Idempotent: a second daemon start updates, not fails.
	if err := c.EnsureStreams(ctx); err != nil {
		t.Fatalf("second EnsureStreams: %v", err)
	}
	cs := step(11, []uint64{1, 2}, nil, []uint64{7})
	first, err := c.PublishChangeSet(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	if first.Duplicate || first.Sequence == 0 {
		t.Fatalf("first publish: %+v", first)
	}
	again, err := c.PublishChangeSet(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Duplicate || again.Sequence != first.Sequence {
		t.Fatalf("republish of %d..%d: %+v, want a duplicate of seq %d", cs.From, cs.To, again, first.Sequence)
	}
	// Another incarnation with the same range is a different change set.
	other := *cs
	other.Incarnation = "inc2"
	res, err := c.PublishChangeSet(ctx, &other)
	if err != nil || res.Duplicate {
		t.Fatalf("other incarnation: %+v, %v", res, err)
	}
	// So is an odd source name, on its own encoded subject.
	odd := step(1, []uint64{1}, nil, nil)
	odd.Source = "my.table *>/é"
	res, err = c.PublishChangeSet(ctx, odd)
	if err != nil || res.Duplicate {
		t.Fatalf("odd source: %+v, %v", res, err)
	}
	info, err := c.js.Stream(ctx, c.subj.ChangeSetStream())
	if err != nil {
		t.Fatal(err)
	}
	if got := info.CachedInfo().State.Msgs; got != 3 {
		t.Fatalf("stream holds %d messages, want 3", got)
	}
	subj, _ := c.subj.ChangeSets(odd.Source)
	msg, err := info.GetLastMsgForSubject(ctx, subj)
	if err != nil {
		t.Fatalf("last message on %s: %v", subj, err)
	}
	got, err := DecodeChangeSet(msg.Data)
	if err != nil || got.Source != odd.Source {
		t.Fatalf("stored change set: %+v, %v", got, err)
	}
	if id := msg.Header.Get("Nats-Msg-Id"); id != "my%2Etable%20%2A%3E%2F%C3%A9:inc1:1-2" {
		t.Fatalf("Nats-Msg-Id = %q", id)
	}
}

func TestPublishOmitsIDsThatDoNotFit(t *testing.T) {
	s := startServer(t, ServerConfig{MaxPayload: 4096})
	c := connect(t, s.ConnectOptions())
	ctx := testCtx(t)
	if err := c.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	cs := step(1, nil, nil, nil)
	for i := uint64(0); i < 5000; i++ {
		cs.Inserted.Add(i * 7919) // scattered: no runs to compress
	}
	res, err := c.PublishChangeSet(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	if !res.IDsOmitted {
		t.Fatal("a change set larger than max payload was published with its ids")
	}
	st, err := c.js.Stream(ctx, c.subj.ChangeSetStream())
	if err != nil {
		t.Fatal(err)
	}
	msg, err := st.GetMsg(ctx, res.Sequence)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeChangeSet(msg.Data)
	if err != nil {
		t.Fatal(err)
	}
	if !got.IDsOmitted || got.Counts.Inserted != 5000 || got.Inserted != nil {
		t.Fatalf("slim change set: omitted=%v counts=%+v", got.IDsOmitted, got.Counts)
	}
}

func TestTokenRequired(t *testing.T) {
	s := startServer(t, ServerConfig{})
	if len(s.Token()) != 64 {
		t.Fatalf("generated token %q is not 32 random bytes in hex", s.Token())
	}
	for _, tc := range []struct {
		name  string
		token string
	}{{"no token", ""}, {"wrong token", strings.Repeat("0", 64)}} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Connect(testCtx(t), ConnectOptions{URL: s.URL(), Token: tc.token})
			if err == nil {
				c.Close()
				t.Fatal("connected without the right token")
			}
			if !errors.Is(err, ErrUnauthorized) {
				t.Fatalf("error %v does not wrap ErrUnauthorized", err)
			}
		})
	}
	c := connect(t, tcpOptions(s))
	if !c.Connected() {
		t.Fatal("not connected with the token")
	}
}

func TestServerConfigErrors(t *testing.T) {
	ctx := testCtx(t)
	if _, err := StartServer(ctx, ServerConfig{StoreDir: t.TempDir(), Host: "0.0.0.0"}); err == nil {
		t.Fatal("embedded server listened on a non-loopback address")
	}
	if _, err := StartServer(ctx, ServerConfig{}); err == nil {
		t.Fatal("embedded server started without a store dir")
	}
	// A port in use fails with an error, not a hang.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if s, err := StartServer(ctx, ServerConfig{StoreDir: t.TempDir(), Port: l.Addr().(*net.TCPAddr).Port}); err == nil {
		_ = s.Shutdown(ctx)
		t.Fatal("embedded server started on a port in use")
	}
}

func TestConnectUnavailable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "nats://" + l.Addr().String()
	l.Close() // nothing listens there now
	start := time.Now()
	_, err = Connect(testCtx(t), ConnectOptions{URL: url})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("connect to nothing: %v, want ErrUnavailable", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("connect to nothing took %v", d)
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	cancel()
	if _, err := Connect(ctx, ConnectOptions{URL: url}); !errors.Is(err, context.Canceled) && !errors.Is(err, ErrUnavailable) {
		t.Fatalf("connect with a canceled context: %v", err)
	}
}

func TestPublishWhileServerDown(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, ServerConfig{StoreDir: dir})
	c := connect(t, tcpOptions(s))
	ctx := testCtx(t)
	if err := c.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the client to notice", 5*time.Second, func() bool { return !c.Connected() })
	start := time.Now()
	_, err := c.PublishChangeSet(ctx, step(1, []uint64{1}, nil, nil))
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("publish while down: %v, want ErrUnavailable", err)
	}
	err = c.PublishRefresh(ctx, &RefreshNotification{View: "v", Source: "events", Mode: ModeNoOp, CommittedAt: time.Now()})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("publish refresh while down: %v, want ErrUnavailable", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("publishing while down blocked for %v", d)
	}
	// Back on the same port and store: the client reconnects and the
	// stream takes the change set again.
	s2 := startServer(t, ServerConfig{StoreDir: dir, Port: s.Port(), Token: s.Token()})
	_ = s2
	waitFor(t, "the client to reconnect", 10*time.Second, c.Connected)
	res, err := c.PublishChangeSet(ctx, step(1, []uint64{1}, nil, nil))
	if err != nil || res.Duplicate {
		t.Fatalf("publish after the server came back: %+v, %v", res, err)
	}
}
