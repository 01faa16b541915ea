package cluster

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Test timing: short, so that lapses are quick; the ratios are the
// defaults'.
const (
	testTTL   = time.Second
	testRenew = 250 * time.Millisecond
)

// startNATS starts an in-process nats-server with JetStream on a loopback
// port; it stops with the test.
func startNATS(t *testing.T) string {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
}

// instance is one member under test, on a connection of its own.
type instance struct {
	c      *Cluster
	nc     *nats.Conn
	cancel context.CancelFunc
	done   chan struct{}
}

// bucket connects to url and creates (or binds) the test bucket.
func bucket(t *testing.T, url string) (*nats.Conn, jetstream.KeyValue) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateOrUpdateKeyValue(t.Context(), BucketConfig("MVD_TEST_CLUSTER", testTTL))
	if err != nil {
		t.Fatal(err)
	}
	return nc, kv
}

func join(t *testing.T, url, id string, onChange func()) (*Cluster, *nats.Conn, error) {
	t.Helper()
	nc, kv := bucket(t, url)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, err := Join(ctx, Options{KV: kv, Self: Member{ID: id, Host: "host-" + id, PID: 4242, AdminAddr: "127.0.0.1:9" + id[len(id)-1:], StartedAt: time.Now()},
		TTL: testTTL, Renew: testRenew, Logger: slog.New(slog.DiscardHandler), OnChange: onChange})
	return c, nc, err
}

// start joins and runs a member until the test ends (or stop).
func start(t *testing.T, url, id string, views []string) *instance {
	t.Helper()
	c, nc, err := join(t, url, id, nil)
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
	return in
}

// stop ends Run (which releases everything) and waits for it.
func (in *instance) stop() {
	in.cancel()
	<-in.done
}

// kill cuts the member off NATS at once (its keys stay until they lapse,
// as after kill -9), then ends its Run.
func (in *instance) kill() {
	in.nc.Close()
	in.stop()
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > d {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// placed reports whether the instances hold exactly their preferred
// views among ids, each view once.
func placed(ins map[string]*instance, views []string) bool {
	ids := make([]string, 0, len(ins))
	for id := range ins {
		ids = append(ids, id)
	}
	want := Assign(ids, KindView, views)
	for id, in := range ins {
		var mine []string
		for _, v := range views {
			if want[v] == id {
				mine = append(mine, v)
			}
		}
		slices.Sort(mine)
		if !slices.Equal(in.c.Held(KindView), mine) {
			return false
		}
	}
	return true
}

// TestLeasesSpreadNoFlap: three members take each view exactly once, as
// Assign places them, and nothing moves while membership is stable.
func TestLeasesSpreadNoFlap(t *testing.T) {
	url := startNATS(t)
	views := names(30)
	ins := map[string]*instance{}
	for _, id := range []string{"n1", "n2", "n3"} {
		ins[id] = start(t, url, id, views)
	}
	waitFor(t, "views placed", 10*time.Second, func() bool { return placed(ins, views) })
	var before [3]uint64
	for id, in := range ins {
		a, l, r := in.c.Stats()
		before[0], before[1], before[2] = before[0]+a, before[1]+l, before[2]+r
		if len(in.c.Members()) != 3 {
			t.Fatalf("%s sees members %v", id, in.c.Members())
		}
	}
	// Several TTLs of stable membership: no lease taken, lost or released.
	deadline := time.Now().Add(2 * testTTL)
	for time.Now().Before(deadline) {
		if !placed(ins, views) {
			t.Fatal("a view moved while membership was stable")
		}
		time.Sleep(20 * time.Millisecond)
	}
	var after [3]uint64
	for _, in := range ins {
		a, l, r := in.c.Stats()
		after[0], after[1], after[2] = after[0]+a, after[1]+l, after[2]+r
	}
	if after != before {
		t.Fatalf("lease changes (taken, lost, released) went from %v to %v with stable membership", before, after)
	}
	st, err := ins["n1"].c.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Leases) != len(views) || len(st.Members) != 3 {
		t.Fatalf("status: %d leases, %d members; want %d, 3", len(st.Leases), len(st.Members), len(views))
	}
	total := 0
	for _, m := range st.Members {
		total += m.Views
		if m.Views != len(ins[m.ID].c.Held(KindView)) {
			t.Errorf("status says %s holds %d views, it holds %d", m.ID, m.Views, len(ins[m.ID].c.Held(KindView)))
		}
	}
	if total != len(views) {
		t.Fatalf("status counts %d views held, want %d", total, len(views))
	}
}

// TestDuplicateIDRefused: a second Join with a live instance's id fails,
// naming the live one; the first keeps its key.
func TestDuplicateIDRefused(t *testing.T) {
	url := startNATS(t)
	first := start(t, url, "dup1", nil)
	_, _, err := join(t, url, "dup1", nil)
	var dup *DuplicateError
	if !errors.As(err, &dup) || !errors.Is(err, ErrDuplicateID) {
		t.Fatalf("second join: %v, want a DuplicateError", err)
	}
	if dup.Other.PID != 4242 || dup.Other.Host != "host-dup1" || dup.Other.AdminAddr != "127.0.0.1:91" || dup.Other.Nonce != first.c.Self().Nonce {
		t.Fatalf("refusal names %+v, want the live instance %+v", dup.Other, first.c.Self())
	}
	for _, want := range []string{"host-dup1", "4242", "127.0.0.1:91"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %s", err, want)
		}
	}
}

// TestRejoinAfterKill: an instance killed (its keys left to lapse) can
// be started again under its id: Join waits for the key to lapse instead
// of refusing.
func TestRejoinAfterKill(t *testing.T) {
	url := startNATS(t)
	start(t, url, "k1", nil).kill()
	c, _, err := join(t, url, "k1", nil)
	if err != nil {
		t.Fatalf("join after kill: %v", err)
	}
	if c.Self().ID != "k1" {
		t.Fatal(c.Self())
	}
}

// TestFailoverAfterKill: the views of a member cut off (kill -9) are
// taken by the others once its leases lapse, within TTL plus a few check
// intervals.
func TestFailoverAfterKill(t *testing.T) {
	url := startNATS(t)
	views := names(24)
	ins := map[string]*instance{}
	for _, id := range []string{"f1", "f2", "f3"} {
		ins[id] = start(t, url, id, views)
	}
	waitFor(t, "views placed", 10*time.Second, func() bool { return placed(ins, views) })
	victim := ins["f2"]
	delete(ins, "f2")
	victim.kill()
	took := waitFor(t, "the killed member's views taken", 5*testTTL, func() bool { return placed(ins, views) })
	t.Logf("views of the killed member taken %v after the kill (TTL %v, renew %v)", took, testTTL, testRenew)
	if took < testTTL/2 {
		t.Fatalf("taken after %v: before its leases could lapse", took)
	}
}

// TestHandoffOnJoinAndLeave: a member that joins gets its share from the
// one holding everything (each view held by one at every look); one that
// stops releases at once, and the other takes its views back well before
// the TTL.
func TestHandoffOnJoinAndLeave(t *testing.T) {
	url := startNATS(t)
	views := names(20)
	a := start(t, url, "h1", views)
	waitFor(t, "h1 holds everything", 5*time.Second, func() bool { return len(a.c.Held(KindView)) == len(views) })
	b := start(t, url, "h2", views)
	ins := map[string]*instance{"h1": a, "h2": b}
	var mu sync.Mutex
	double := ""
	stopCheck := make(chan struct{})
	checked := make(chan struct{})
	go func() { // every look: no view held by both
		defer close(checked)
		for {
			select {
			case <-stopCheck:
				return
			default:
			}
			ha, hb := a.c.Held(KindView), b.c.Held(KindView)
			for _, v := range ha {
				if slices.Contains(hb, v) {
					mu.Lock()
					double = v
					mu.Unlock()
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	waitFor(t, "views split", 10*time.Second, func() bool { return placed(ins, views) })
	close(stopCheck)
	<-checked
	if double != "" {
		t.Fatalf("view %s held by both during the hand-off", double)
	}
	if n := len(b.c.Held(KindView)); n == 0 || n == len(views) {
		t.Fatalf("h2 holds %d of %d views", n, len(views))
	}
	b.stop()
	took := waitFor(t, "h1 holds everything again", 5*time.Second, func() bool { return len(a.c.Held(KindView)) == len(views) })
	if took >= testTTL {
		t.Fatalf("views taken back %v after a clean stop: waited for the TTL (%v) instead of the release", took, testTTL)
	}
	// A name no longer wanted is released.
	a.c.SetWanted(KindView, views[:5])
	waitFor(t, "dropped names released", 5*time.Second, func() bool { return len(a.c.Held(KindView)) == 5 })
}
