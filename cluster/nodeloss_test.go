package cluster

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mvd-project/mvd/internal/natstest"
)

// TestNodeLoss: on a 3-node NATS cluster with the bucket on 3 replicas
// and the default lease timing, killing the node of the JetStream meta
// leader leaves every view with its holder: renewals that time out while
// a leader is elected keep the leases (a NATS election takes 4 to 9 s, more
// than the TTL, so some keys lapse meanwhile: their holders take them
// again at once, unless the preferred member did). Three nats-server processes and several TTLs: make bench runs
// it (MVD_CLUSTER_LONG=1).
func TestNodeLoss(t *testing.T) {
	if os.Getenv("MVD_CLUSTER_LONG") == "" {
		t.Skip("long form (3 nats-server processes): MVD_CLUSTER_LONG=1, make bench")
	}
	nc3 := natstest.Start(t, 3)
	views := names(12)
	ins := map[string]*instance{}
	for _, id := range []string{"r1", "r2", "r3"} {
		nc, err := nats.Connect(nc3.URLs(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		cfg := BucketConfig("MVD_R3_CLUSTER", DefaultTTL)
		cfg.Replicas = 3
		kv, err := js.CreateOrUpdateKeyValue(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Join(t.Context(), Options{KV: kv, Self: Member{ID: id}, TTL: DefaultTTL, Renew: DefaultRenew, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		c.SetWanted(KindView, views)
		ctx, cancel := context.WithCancel(context.Background())
		in := &instance{c: c, nc: nc, cancel: cancel, done: make(chan struct{})}
		go func() {
			defer close(in.done)
			c.Run(ctx)
		}()
		t.Cleanup(in.stop)
		ins[id] = in
	}
	waitFor(t, "views placed", 20*time.Second, func() bool { return placed(ins, views) })
	var lostBefore uint64
	for _, in := range ins {
		_, l, _ := in.c.Stats()
		lostBefore += l
	}
	leader := nc3.MetaLeader(t)
	nc3.Kill(leader)
	killed := time.Now()
	// Through the election and a few TTLs after it.
	for time.Since(killed) < 2*DefaultTTL {
		time.Sleep(50 * time.Millisecond)
	}
	waitFor(t, "views placed after the node loss", 20*time.Second, func() bool { return placed(ins, views) })
	var lost uint64
	for _, in := range ins {
		_, l, _ := in.c.Stats()
		lost += l
	}
	t.Logf("meta leader node %d killed: %d leases lost", leader, lost-lostBefore)

}
