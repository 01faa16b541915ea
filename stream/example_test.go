package stream_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/mvd-project/mvd/stream"
)

// A subscriber of refresh notifications, as `mvd subscribe` does it: read
// the daemon's NATS URL and token (from DIR/.mvd/serve.json), connect,
// subscribe to one view (or, with no names, to every view), print each
// notification. The client reconnects by itself when the daemon restarts.
func Example_subscriber() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// Stand-in for a running daemon: an embedded server and a publisher.
	dir, _ := os.MkdirTemp("", "mvd-example-")
	defer os.RemoveAll(dir)
	srv, err := stream.StartServer(ctx, stream.ServerConfig{StoreDir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	daemon, err := stream.Connect(ctx, srv.ConnectOptions())
	if err != nil {
		log.Fatal(err)
	}
	defer daemon.Close()
	if err := daemon.EnsureStreams(ctx); err != nil {
		log.Fatal(err)
	}

	// The subscriber: URL and token as serve.json gives them.
	conn, err := stream.Connect(ctx, stream.ConnectOptions{URL: srv.URL(), Token: srv.Token()})
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	sub, err := conn.SubscribeRefreshes(ctx, "clicks_by_user")
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()
	fmt.Println("subscribed to", sub.Views())

	err = daemon.PublishRefresh(ctx, &stream.RefreshNotification{
		View: "clicks_by_user", Source: "events", Mode: stream.ModeIncremental, RowsWritten: 1,
		SourceVersion: 12, Version: 7, LagMS: 3.1, CommittedAt: time.Now(),
	})
	if err != nil {
		log.Fatal(err)
	}

	n, err := sub.Next(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if n.Error != "" {
		fmt.Printf("%s: refresh failed: %s\n", n.View, n.Error)
	} else {
		fmt.Printf("%s: %s, %d rows, source v%d -> view v%d\n", n.View, n.Mode, n.RowsWritten, n.SourceVersion, n.Version)
	}
	// Output:
	// subscribed to [clicks_by_user]
	// clicks_by_user: incremental, 1 rows, source v12 -> view v7
}
