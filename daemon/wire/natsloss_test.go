package wire

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/internal/natstest"
	"github.com/mvd-project/mvd/stream"
)

// TestServeSurvivesMetaLeaderKill: mvd serve on a three-node NATS cluster
// (--nats-url U1,U2,U3) while the JetStream meta leader is killed
// (kill -9). A LanceDB commit made right after the kill is refreshed
// within 10 s (refreshes do not wait on NATS: the watcher wakes the view
// while its feed is down) and notified within 20 s; afterwards the view's
// durable consumer is back (it delivers, nothing is left unacked) and the
// view equals LanceDB's evaluation.
func TestServeSurvivesMetaLeaderKill(t *testing.T) {
	dir := t.TempDir()
	d, db := sourceAndView(t, dir)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cl := natstest.Start(t, 3)
	srv, cfg := startServe(t, "--db", dir, "--admin-addr", "127.0.0.1:0", "--state-dir", filepath.Join(t.TempDir(), "state"), "--nats-url", cl.URLs())
	waitUntil(t, "ready", func() (bool, error) { ok, why := srv.Ready(); return ok, fmt.Errorf("%s", why) })
	sub := notesOf(t, cl.URLs(), cfg.SubjectPrefix)
	watermark := func() (uint64, error) {
		s, err := d.Schema("v", 0)
		if err != nil {
			return 0, err
		}
		return strconv.ParseUint(s.Metadata["mv.source_version"], 10, 64)
	}
	gen := lancedbtest.NewOpGen()
	commit := func(kind lancedbtest.OpKind) uint64 {
		t.Helper()
		v, err := d.Apply("src", gen.Next(kind))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v1 := commit(lancedbtest.Append)
	waitSourceVersion(t, sub, v1)

	leader := cl.MetaLeader(t)
	onLeader := cl.ConnectedNode("mvd serve") == leader
	killed := time.Now()
	cl.Kill(leader)
	v2 := commit(lancedbtest.UpdateAcrossFilter)
	waitUntil(t, "the view past the commit after the kill", func() (bool, error) {
		w, err := watermark()
		return err == nil && w >= v2, err
	})
	refreshed := time.Since(killed)
	waitSourceVersion(t, sub, v2)
	notified := time.Since(killed)
	t.Logf("killed the meta leader %s (mvd serve connected to it: %v): source v%d refreshed after %v, notified after %v",
		cl.Name(leader), onLeader, v2, refreshed.Round(time.Millisecond), notified.Round(time.Millisecond))
	if refreshed > 10*time.Second || notified > 20*time.Second {
		t.Errorf("refreshed %v, notified %v after the kill; want within 10 s and 20 s", refreshed, notified)
	}

	// The feed is back: later commits are delivered through the view's
	// consumer, which ends with nothing pending or unacked.
	v3 := commit(lancedbtest.Delete)
	waitSourceVersion(t, sub, v3)
	nc, err := nats.Connect(cl.URLs())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	name, err := stream.ConsumerName("v")
	if err != nil {
		t.Fatal(err)
	}
	subj := stream.Subjects{Prefix: cfg.SubjectPrefix}
	waitUntil(t, "the view's consumer to have delivered and acked everything", func() (bool, error) {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		c, err := js.Consumer(cctx, subj.ChangeSetStream(), name)
		if err != nil {
			return false, err
		}
		info, err := c.Info(cctx)
		if err != nil {
			return false, err
		}
		return info.NumPending == 0 && info.NumAckPending == 0 && info.Delivered.Stream > 0 && info.Cluster != nil && len(info.Cluster.Replicas) == 2, fmt.Errorf("%+v", info)
	})
	if err := d.CheckViewAtWatermark("v"); err != nil {
		t.Fatal(err)
	}
}

// TestNotificationKeptWhileNATSAway: a refresh committed while the NATS
// server is down (the view refreshed from the source) is notified once the
// server is back, not dropped with its failed publish.
func TestNotificationKeptWhileNATSAway(t *testing.T) {
	dir := t.TempDir()
	d, db := sourceAndView(t, dir)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ns := natstest.Start(t, 1)
	srv, cfg := startServe(t, "--db", dir, "--admin-addr", "127.0.0.1:0", "--state-dir", filepath.Join(t.TempDir(), "state"), "--nats-url", ns.URLs())
	waitUntil(t, "ready", func() (bool, error) { ok, why := srv.Ready(); return ok, fmt.Errorf("%s", why) })
	gen := lancedbtest.NewOpGen()
	v1, err := d.Apply("src", gen.Next(lancedbtest.Append))
	if err != nil {
		t.Fatal(err)
	}
	waitSourceVersion(t, notesOf(t, ns.URLs(), cfg.SubjectPrefix), v1)

	ns.Kill(0)
	v2, err := d.Apply("src", gen.Next(lancedbtest.UpdateAcrossFilter))
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the view refreshed while NATS is away", func() (bool, error) {
		s, err := d.Schema("v", 0)
		if err != nil {
			return false, err
		}
		w, err := strconv.ParseUint(s.Metadata["mv.source_version"], 10, 64)
		return err == nil && w >= v2, err
	})
	ns.Restart(0)
	n := waitSourceVersion(t, notesOf(t, ns.URLs(), cfg.SubjectPrefix), v2)
	if n.SourceVersion != v2 || n.Mode != "incremental" || n.Recovered {
		t.Fatalf("notification of the refresh made while NATS was away: %+v", n)
	}
}
