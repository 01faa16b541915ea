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

// TestClusterMetaLeaderKillAndRestart checks the harness itself: three
// nodes agree on a meta leader, a client's node shows on /connz, killing
// the leader elects another, and the killed node rejoins on Restart. (The
// stream package tests what JetStream does across the kill.)
func TestClusterMetaLeaderKillAndRestart(t *testing.T) {
	c := natstest.Start(t, 3)
	nc, err := nats.Connect(c.URLs(), nats.Name("natstest-probe"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if on := c.ConnectedNode("natstest-probe"); on < 0 || c.ClientPort(on) != portOf(t, nc.ConnectedUrl()) {
		t.Fatalf("probe on node %d per /connz, connected to %s", on, nc.ConnectedUrl())
	}
	leader := c.MetaLeader(t)
	c.Kill(leader)
	if got := c.MetaLeader(t); got == leader {
		t.Fatalf("meta leader still %d after it was killed", got)
	}
	c.Restart(leader)
	c.MetaLeader(t)
	var jsz struct {
		Meta struct {
			Size int `json:"cluster_size"`
		} `json:"meta_cluster"`
	}
	resp, err := http.Get(c.MonitorURL(leader) + "/jsz")
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
