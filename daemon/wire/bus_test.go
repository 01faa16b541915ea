package wire

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/spf13/pflag"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/message"
	"github.com/mvd-project/mvd/serveinfo"
	"github.com/mvd-project/mvd/stream"
)

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

func testConfig(t testing.TB, args ...string) daemon.Config {
	t.Helper()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	daemon.BindCommandFlags(fs)
	if err := fs.Parse(append([]string{"--db", t.TempDir(), "--admin-addr", "127.0.0.1:0"}, args...)); err != nil {
		t.Fatal(err)
	}
	cfg, err := daemon.LoadConfig(fs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// busRoundTrip publishes a change set and a notification through b and
// reads them back as a view's consumer and a subscriber would.
func busRoundTrip(t *testing.T, b *Bus, url, token string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := stream.Connect(ctx, stream.ConnectOptions{URL: url, Token: token, Name: "test", Subjects: stream.Subjects{Prefix: b.cfg.SubjectPrefix}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cons, err := conn.ViewConsumer(ctx, "v", "src", stream.ConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := conn.SubscribeRefreshes(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	committed := time.Now().UTC().Truncate(time.Microsecond)
	ev := &message.ChangeSet{Source: "src", Incarnation: "1.42", From: 3, To: 4, Op: "append",
		CommittedAt: committed, SchemaFingerprint: "abc",
		Inserted: roaring64.BitmapOf(7, 8), Updated: roaring64.New(), Deleted: roaring64.BitmapOf(1)}
	if err := b.PublishChange(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if err := b.PublishChange(ctx, ev); err != nil { // a duplicate is dropped by the server
		t.Fatal(err)
	}
	batch, err := cons.Fetch(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(batch.ChangeSets) != 1 {
		t.Fatalf("%d change sets, want 1 (the duplicate dropped)", len(batch.ChangeSets))
	}
	cs := batch.ChangeSets[0]
	if cs.Source != "src" || cs.Incarnation != "1.42" || cs.From != 3 || cs.To != 4 || cs.Op != "append" ||
		!cs.Inserted.Equals(roaring64.BitmapOf(7, 8)) || !cs.Deleted.Equals(roaring64.BitmapOf(1)) || cs.SchemaFingerprint != "abc" || !cs.CommittedAt.Equal(committed) {
		t.Errorf("change set %+v", cs)
	}
	if err := batch.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	n := &message.Notification{Schema: 1, View: "v", Source: "src", Mode: "incremental", RowsWritten: 2, SourceVersion: 4, Version: 9, LagMS: 3.5, CommittedAt: committed}
	if err := b.PublishRefreshed(ctx, n); err != nil {
		t.Fatal(err)
	}
	got, err := sub.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.View != "v" || got.Source != "src" || got.Mode != "incremental" || got.RowsWritten != 2 || got.SourceVersion != 4 || got.Version != 9 || got.LagMS != 3.5 {
		t.Errorf("notification %+v", got)
	}
}

// TestBusEmbedded: the embedded server carries change sets and
// notifications, and a restart on the same state directory keeps its
// URL and token, so subscribers reconnect by themselves.
func TestBusEmbedded(t *testing.T) {
	cfg := testConfig(t)
	ctx := context.Background()
	b := NewBus(cfg, quietLog)
	url, token, err := b.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if token == "" {
		t.Fatal("embedded server without a token")
	}
	busRoundTrip(t, b, url, token)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := serveinfo.Write(cfg.StateDir, serveinfo.Info{NATSURL: url, Token: token}); err != nil {
		t.Fatal(err)
	}
	b2 := NewBus(cfg, quietLog)
	url2, token2, err := b2.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if url2 != url || token2 != token {
		t.Errorf("restart: %s %s, want the previous %s %s", url2, token2, url, token)
	}
}

// TestBusExternal: with --nats-url the bus uses an external nats-server
// process (built from go.mod's module), starting nothing itself.
func TestBusExternal(t *testing.T) {
	u := natsServer(t)
	cfg := testConfig(t, "--nats-url", u)
	b := NewBus(cfg, quietLog)
	url, token, err := b.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if url != u || token != "" {
		t.Errorf("external: %q %q", url, token)
	}
	busRoundTrip(t, b, url, "")
}

// TestBusUnavailable: an external server that is not there is a clear
// error at start.
func TestBusUnavailable(t *testing.T) {
	cfg := testConfig(t, "--nats-url", "nats://127.0.0.1:1")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, _, err := NewBus(cfg, quietLog).Start(ctx); err == nil {
		t.Fatal("no error for an unreachable NATS")
	}
}
