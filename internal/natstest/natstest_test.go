package natstest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/mvd-project/mvd/internal/natstest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestSingleServerJetStream(t *testing.T) {
	url := natstest.Single(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.AccountInfo(ctx); err != nil {
		t.Fatalf("account info: %v", err)
	}
}

// TestClusterKillAndRestart checks the harness itself: three nodes agree
// on a meta leader, a client's node shows on /connz, and a killed node
// rejoins on Restart.
func TestClusterKillAndRestart(t *testing.T) {
	c := natstest.Start(t, 3)
	nc, err := nats.Connect(c.URLs(), nats.Name("natstest-probe"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if on := c.ConnectedNode("natstest-probe"); on < 0 || c.ClientPort(on) != portOf(t, nc.ConnectedUrl()) {
		t.Fatalf("probe on node %d per /connz, connected to %s", on, nc.ConnectedUrl())
	}
	// A follower killed and restarted: the leader stays, and the node
	// rejoins. (Killing the leader itself, which costs an election of
	// about 4 s, is what the stream and daemon tests do.)
	leader := c.MetaLeader(t)
	follower := (leader + 1) % c.Size()
	c.Kill(follower)
	if got := c.MetaLeader(t); got != leader {
		t.Fatalf("meta leader %d after killing follower %d, was %d", got, follower, leader)
	}
	c.Restart(follower)
	if got := c.MetaLeader(t); got != leader {
		t.Fatalf("meta leader %d after restarting follower %d, was %d", got, follower, leader)
	}
	var jsz struct {
		Meta struct {
			Size int `json:"cluster_size"`
		} `json:"meta_cluster"`
	}
	resp, err := http.Get(c.MonitorURL(follower) + "/jsz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&jsz); err != nil {
		t.Fatal(err)
	}
	if jsz.Meta.Size != 3 {
		t.Fatalf("restarted node sees a cluster of %d", jsz.Meta.Size)
	}
}

func portOf(t *testing.T, u string) int {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p.Port())
	if err != nil {
		t.Fatal(err)
	}
	return n
}
