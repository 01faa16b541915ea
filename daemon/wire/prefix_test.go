package wire

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mvd-project/mvd/cluster"
	"github.com/mvd-project/mvd/stream"
)

// TestTwoDatabasesOneNATS (issue 23, subjects per database): two mvd
// serve on two databases (each with a source "src" and a view "v") share
// one external nats-server. Each takes its own default subject prefix,
// so its streams and durable consumer are its own, and the refresh
// stream of each holds only its own database's notifications.
func TestTwoDatabasesOneNATS(t *testing.T) {
	url := natsServer(t)
	a, b := newViewDB(t), newViewDB(t)
	srvA, cfgA := startServe(t, "--db", a.dir, "--nats-url", url, "--admin-addr", "127.0.0.1:0", "--instance-id", "node-a")
	srvB, cfgB := startServe(t, "--db", b.dir, "--nats-url", url, "--admin-addr", "127.0.0.1:0")
	if cfgA.SubjectPrefix == cfgB.SubjectPrefix || cfgA.SubjectPrefix != stream.PrefixFor(a.dir) {
		t.Fatalf("subject prefixes %q and %q: want distinct, derived from the databases", cfgA.SubjectPrefix, cfgB.SubjectPrefix)
	}
	if got := srvA.Info().SubjectPrefix; got != cfgA.SubjectPrefix {
		t.Fatalf("serve.json subject_prefix %q, want %q", got, cfgA.SubjectPrefix)
	}
	// A's source reaches version 2, B's version 4: a notification of B
	// in A's stream would say source_version 3 or 4.
	lastA := writeRows(t, a.src, 10, 20)
	var lastB uint64
	for i := int64(1); i <= 3; i++ {
		lastB = writeRows(t, b.src, 10*i, 10*i+10)
	}
	// Each notification names the instance that committed it.
	if n := waitSourceVersion(t, notesOf(t, srvB.Info().NATSURL, cfgB.SubjectPrefix), lastB); n.Instance != cfgB.InstanceID || n.Instance == "" {
		t.Errorf("B's notification says instance %q, want %q", n.Instance, cfgB.InstanceID)
	}
	if n := waitSourceVersion(t, notesOf(t, srvA.Info().NATSURL, cfgA.SubjectPrefix), lastA); n.Instance != "node-a" {
		t.Errorf("A's notification says instance %q, want node-a", n.Instance)
	}

	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var streams []string
	for name := range js.StreamNames(ctx).Name() {
		streams = append(streams, name)
	}
	slices.Sort(streams)
	sa, sb := stream.Subjects{Prefix: cfgA.SubjectPrefix}, stream.Subjects{Prefix: cfgB.SubjectPrefix}
	// The jobs' buckets and the instances' cluster buckets are streams too.
	want := []string{sa.ChangeSetStream(), sa.RefreshStream(), sb.ChangeSetStream(), sb.RefreshStream(),
		"KV_" + sa.Bucket(JobsBucket), "KV_" + sb.Bucket(JobsBucket),
		"KV_" + sa.Bucket(cluster.BucketSuffix), "KV_" + sb.Bucket(cluster.BucketSuffix)}
	slices.Sort(want)
	if !slices.Equal(streams, want) {
		t.Fatalf("streams %v, want %v", streams, want)
	}
	for _, s := range []stream.Subjects{sa, sb} {
		st, err := js.Stream(ctx, s.ChangeSetStream())
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for n := range st.ConsumerNames(ctx).Name() {
			names = append(names, n)
		}
		if len(names) != 1 {
			t.Errorf("stream %s has consumers %v, want its own view's one", s.ChangeSetStream(), names)
		}
	}
	checkStored(t, js, sa.RefreshStream(), lastA)
	checkStored(t, js, sb.RefreshStream(), lastB)
}

// notesOf subscribes to every notification under prefix at url.
func notesOf(t *testing.T, url, prefix string) *stream.Subscription {
	t.Helper()
	conn, err := stream.Connect(context.Background(), stream.ConnectOptions{URL: url, Name: "test subscriber", Subjects: stream.Subjects{Prefix: prefix}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	sub, err := conn.SubscribeRefreshesSince(context.Background(), time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Close() })
	return sub
}

// waitSourceVersion reads notifications until one reaches sv, and
// returns that one.
func waitSourceVersion(t *testing.T, sub *stream.Subscription, sv uint64) *stream.RefreshNotification {
	t.Helper()
	for {
		n := nextNote(t, sub)
		if n.Error != "" {
			t.Fatalf("refresh failed: %+v", n)
		}
		if n.SourceVersion >= sv {
			return n
		}
	}
}

// checkStored reads every message of a refresh stream: each must be a
// notification of view "v" at most at source version maxSV.
func checkStored(t *testing.T, js jetstream.JetStream, name string, maxSV uint64) {
	t.Helper()
	ctx := context.Background()
	st, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs == 0 {
		t.Fatalf("stream %s is empty", name)
	}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			continue // removed by the per-view limit
		}
		var n struct {
			View          string `json:"view"`
			SourceVersion uint64 `json:"source_version"`
		}
		if err := json.Unmarshal(m.Data, &n); err != nil {
			t.Fatalf("%s seq %d: %v", name, seq, err)
		}
		if n.View != "v" || n.SourceVersion > maxSV {
			t.Errorf("%s holds %s (source version above %d: another database's)", name, m.Data, maxSV)
		}
	}
}
