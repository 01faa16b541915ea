package stream

import (
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
	ctx := testCtx(t)
	// One server, not clustered (as the embedded one): one replica.
	single := connect(t, ConnectOptions{URL: natstest.Single(t), ReconnectWait: 20 * time.Millisecond})
	if err := single.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	if r := replicasOf(t, single, single.Subjects().ChangeSetStream()); r != 1 {
		t.Fatalf("single server: stream has %d replicas, want 1", r)
	}

	// A three-node cluster, named by one URL only: the client learns the
	// other nodes from the cluster and asks for three replicas.
	cl := natstest.Start(t, 3)
	for _, o := range []ConnectOptions{clusterOptions(cl), {URL: cl.URL(1), Subjects: Subjects{Prefix: "u"}}} {
		c := connect(t, o)
		if r, err := c.Replicas(ctx); err != nil || r != 3 {
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
		kv, err := c.EnsureKeyValue(ctx, jetstream.KeyValueConfig{Bucket: c.Subjects().Bucket("probe"), History: 1})
		if err != nil {
			t.Fatal(err)
		}
		st, err := kv.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.(*jetstream.KeyValueBucketStatus).StreamInfo().Config.Replicas != 3 {
			t.Fatalf("bucket %s: %+v", st.Bucket(), st.(*jetstream.KeyValueBucketStatus).StreamInfo().Config)
		}
	}
}

func TestClusterSizeCountsServersOnce(t *testing.T) {
	got := clusterSize([]string{"nats://tok@127.0.0.1:4222", "nats://localhost:4222", "nats://[::1]:4222", "tls://10.0.0.2", "nats://10.0.0.2:4222", "nats://10.0.0.3:5222"})
	if got != 3 {
		t.Fatalf("clusterSize = %d, want 3", got)
	}
}
