package stream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mvd-project/mvd/internal/natstest"
	"github.com/nats-io/nats.go/jetstream"
)

// clusterOptions connects to every node of c, as --nats-url U1,U2,U3 does.
func clusterOptions(c *natstest.Cluster) ConnectOptions {
	return ConnectOptions{URL: c.URLs(), ReconnectWait: 20 * time.Millisecond, Subjects: Subjects{Prefix: "t"}}
}

// replicasOf is the replication factor stream name was created with.
func replicasOf(t *testing.T, c *Conn, name string) int {
	t.Helper()
	s, err := c.JetStream().Stream(testCtx(t), name)
	if err != nil {
		t.Fatalf("stream %s: %v", name, err)
	}
	return s.CachedInfo().Config.Replicas
}

func TestReplicasFollowClusterSize(t *testing.T) {
	ctx := clusterCtx(t)
	// One server, not clustered (as the embedded one): one replica.
	single := connect(t, ConnectOptions{URL: natstest.Single(t), ReconnectWait: 20 * time.Millisecond})
	if err := single.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	if r := replicasOf(t, single, single.Subjects().ChangeSetStream()); r != 1 {
		t.Fatalf("single server: stream has %d replicas, want 1", r)
	}

	// A three-node cluster, named by every URL, and by one URL only: the
	// streams and buckets get three replicas either way, even while the
	// client connected to one node has not yet learnt of the others (the
	// node advertises them once its routes are up; a CI run saw the
	// client know of 2 and the streams made with 2).
	cl := natstest.Start(t, 3)
	for i, o := range []ConnectOptions{clusterOptions(cl), {URL: cl.URL(1), Subjects: Subjects{Prefix: "u"}}} {
		c := connect(t, o)
		if r, err := c.Replicas(ctx); i == 0 && (err != nil || r != 3) {
			t.Fatalf("Replicas via %s = %d, %v; want 3", c.ConnectedURL(), r, err)
		}
		if err := c.EnsureStreams(ctx); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{c.Subjects().ChangeSetStream(), c.Subjects().RefreshStream()} {
			if r := replicasOf(t, c, name); r != 3 {
				t.Fatalf("stream %s has %d replicas, want 3", name, r)
			}
		}
		if r := probeBucketReplicas(t, ctx, c); r != 3 {
			t.Fatalf("bucket probe has %d replicas, want 3", r)
		}
	}
}

// probeBucketReplicas ensures a bucket "probe" through c and returns its
// replication factor.
func probeBucketReplicas(t *testing.T, ctx context.Context, c *Conn) int {
	t.Helper()
	kv, err := c.EnsureKeyValue(ctx, jetstream.KeyValueConfig{Bucket: c.Subjects().Bucket("probe"), History: 1})
	if err != nil {
		t.Fatal(err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st.(*jetstream.KeyValueBucketStatus).StreamInfo().Config.Replicas
}

// TestReplicasStepDownOnSmallCluster: on a two-node cluster the request
// for three replicas is refused (no peers for the placement), and the
// streams and buckets are made with two.
func TestReplicasStepDownOnSmallCluster(t *testing.T) {
	cl := natstest.Start(t, 2)
	ctx := clusterCtx(t)
	c := connect(t, clusterOptions(cl))
	if err := c.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{c.Subjects().ChangeSetStream(), c.Subjects().RefreshStream()} {
		if r := replicasOf(t, c, name); r != 2 {
			t.Fatalf("stream %s has %d replicas on a 2-node cluster, want 2", name, r)
		}
	}
	if r := probeBucketReplicas(t, ctx, c); r != 2 {
		t.Fatalf("bucket probe has %d replicas on a 2-node cluster, want 2", r)
	}
}

func TestClusterSizeCountsServersOnce(t *testing.T) {
	got := clusterSize([]string{"nats://tok@127.0.0.1:4222", "nats://localhost:4222", "nats://[::1]:4222", "tls://10.0.0.2", "nats://10.0.0.2:4222", "nats://10.0.0.3:5222"})
	if got != 3 {
		t.Fatalf("clusterSize = %d, want 3", got)
	}
}

// leaderOf is the index of the node leading view's consumer.
func leaderOf(t *testing.T, cl *natstest.Cluster, c *Conn, vc *ViewConsumer) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(testCtx(t), 2*time.Second)
	defer cancel()
	info, err := vc.cons.Info(ctx)
	if err != nil || info.Cluster == nil {
		t.Logf("consumer info: %v", err)
		return -1
	}
	return cl.Index(info.Cluster.Leader)
}

// moveConsumerLeader makes node i lead view's consumer (a leader step-down
// preferring it).
func moveConsumerLeader(t *testing.T, cl *natstest.Cluster, c *Conn, vc *ViewConsumer, i int) {
	t.Helper()
	subj := fmt.Sprintf("$JS.API.CONSUMER.LEADER.STEPDOWN.%s.%s", c.subj.ChangeSetStream(), vc.name)
	req := fmt.Sprintf(`{"placement":{"preferred":%q}}`, cl.Name(i))
	waitFor(t, "consumer leader on "+cl.Name(i), 30*time.Second, func() bool {
		if leaderOf(t, cl, c, vc) == i {
			return true
		}
		m, err := c.nc.Request(subj, []byte(req), 2*time.Second)
		if err == nil {
			t.Logf("stepdown: %s", m.Data)
		}
		return leaderOf(t, cl, c, vc) == i
	})
}

// fetchOnceAvailable fetches from vc, trying again while the consumer is
// unavailable: just after a leader step-down its new leader may not take
// pull requests yet ("no responders"), and Fetch says so at once rather
// than wait (as the daemon's feed expects).
func fetchOnceAvailable(t *testing.T, vc *ViewConsumer) *Batch {
	t.Helper()
	var b *Batch
	waitFor(t, "a fetch from the consumer", 20*time.Second, func() bool {
		var err error
		b, err = vc.Fetch(testCtx(t), 10)
		if err != nil && !errors.Is(err, ErrUnavailable) {
			t.Fatalf("fetch: %v", err)
		}
		return err == nil
	})
	return b
}

// TestConsumerSurvivesMetaLeaderKill: a view's consumer (R3) whose node is
// killed — the JetStream meta leader, also leading the stream's consumer —
// while a Fetch waits on it. The Fetch ends promptly (it does not wait out
// its 30 s pull), the consumer binds again on the surviving nodes, the
// client (on another node) keeps its connection, and publishes and
// deliveries resume with nothing lost or delivered twice.
func TestConsumerSurvivesMetaLeaderKill(t *testing.T) {
	cl := natstest.Start(t, 3)
	leader := cl.MetaLeader(t)
	var others []string
	for i := 0; i < cl.Size(); i++ {
		if i != leader {
			others = append(others, cl.URL(i))
		}
	}
	o := clusterOptions(cl)
	o.URL = strings.Join(others, ",") // the client starts on another node
	c := connect(t, o)
	ctx := clusterCtx(t)
	if err := c.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	vc, err := c.ViewConsumer(ctx, "v", "events", ConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	moveConsumerLeader(t, cl, c, vc, leader)
	publishSteps(t, c, 1, 2)
	b := fetchOnceAvailable(t, vc)
	if err := b.Ack(ctx); err != nil {
		t.Fatal(err)
	}

	fetched := make(chan error, 1)
	go func() {
		_, err := vc.Fetch(ctx, 10)
		fetched <- err
	}()
	// The pull request has reached the leader when it waits there.
	waitFor(t, "the pull request to wait", 5*time.Second, func() bool {
		info, err := vc.cons.Info(ctx)
		return err == nil && info.NumWaiting > 0
	})
	killed := time.Now()
	cl.Kill(leader)
	select {
	case err := <-fetched:
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("fetch on the killed leader: %v, want ErrUnavailable", err)
		}
		t.Logf("fetch ended %v after the kill", time.Since(killed).Round(time.Millisecond))
	case <-time.After(10 * time.Second):
		t.Fatal("fetch still waiting 10s after its consumer's leader was killed")
	}

	// Publish (retrying while the stream elects a leader), bind again,
	// fetch: the next change set arrives, once.
	for v := uint64(2); v < 4; v++ {
		waitFor(t, fmt.Sprintf("publish of %d..%d", v, v+1), 20*time.Second, func() bool {
			pctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			_, err := c.PublishChangeSet(pctx, step(v, []uint64{v * 10}, nil, nil))
			return err == nil
		})
	}
	t.Logf("publishes resumed %v after the kill", time.Since(killed).Round(time.Millisecond))
	var got []*ChangeSet
	waitFor(t, "the consumer to deliver again", 20*time.Second, func() bool {
		bctx, bcancel := context.WithTimeout(ctx, 3*time.Second)
		defer bcancel()
		vc2, err := c.ViewConsumer(bctx, "v", "events", ConsumerConfig{})
		if err != nil {
			t.Logf("bind: %v", err)
			return false
		}
		fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		b, err := vc2.Fetch(fctx, 10)
		if err != nil {
			t.Logf("fetch: %v", err)
			return false
		}
		got = append(got, b.ChangeSets...)
		if err := b.Ack(ctx); err != nil {
			t.Fatal(err)
		}
		return true
	})
	t.Logf("deliveries resumed %v after the kill", time.Since(killed).Round(time.Millisecond))
	for len(got) < 2 {
		b := fetchN(t, vc, 1)[0]
		got = append(got, b.ChangeSets...)
		if err := b.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 2 || got[0].From != 2 || got[1].From != 3 {
		t.Fatalf("after the kill got %d change sets %v, want 2..3 and 3..4 once", len(got), got)
	}
	if cl.Index(c.nc.ConnectedServerName()) == leader {
		t.Fatal("client on the killed node")
	}
}

// TestTokenInURLNotShown: a token given in the URL (as natstest's and
// serve.json's URLs carry it) shows neither in ConnectedURL nor in the
// reconnect log line after the client moved to another node.
func TestTokenInURLNotShown(t *testing.T) {
	cl := natstest.Start(t, 3)
	var logs lockedBuffer
	o := clusterOptions(cl)
	o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	c := connect(t, o)
	if u := c.ConnectedURL(); strings.Contains(u, natstest.Token) || u == "" {
		t.Fatalf("ConnectedURL %q", u)
	}
	cl.Kill(cl.Index(c.nc.ConnectedServerName()))
	waitFor(t, "the reconnect log line", 10*time.Second, func() bool { return strings.Contains(logs.String(), "NATS reconnected") })
	if strings.Contains(logs.String(), natstest.Token) {
		t.Fatalf("the token is in the log:\n%s", logs.String())
	}
}
