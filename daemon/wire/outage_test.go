package wire

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/stream"
	"github.com/mvd-project/mvd/vfs"
)

// TestNATSOutage: a real nats-server (embedded in the test, as an
// external server to the daemon) is stopped and restarted while LanceDB
// keeps committing. The view keeps converging while NATS is away
// (refreshed from the source), no view commit reflects a source version
// twice, the stream holds change sets for every source version after
// recovery (the missed ones republished), the view's durable consumer
// resumes and has nothing left unacked; a view created while running gets
// its consumer, and loses it when dropped.
func TestNATSOutage(t *testing.T) {
	dir := t.TempDir()
	d, db := sourceAndView(t, dir)
	defer db.Close()
	ctx := context.Background()
	start, err := d.Version("src")
	if err != nil {
		t.Fatal(err)
	}

	sc := stream.ServerConfig{StoreDir: filepath.Join(t.TempDir(), "nats"), Token: "outage-token"}
	ns, err := stream.StartServer(ctx, sc)
	if err != nil {
		t.Fatal(err)
	}
	sc.Port = ns.Port()
	defer func() { _ = ns.Shutdown(context.Background()) }()
	natsURL := fmt.Sprintf("nats://%s@127.0.0.1:%d", sc.Token, sc.Port)
	srv, cfg := startServe(t, "--db", dir, "--admin-addr", "127.0.0.1:0", "--state-dir", filepath.Join(t.TempDir(), "state"), "--nats-url", natsURL)
	waitUntil(t, "ready", func() (bool, error) { ok, why := srv.Ready(); return ok, fmt.Errorf("%s", why) })

	watermark := func(view string) (uint64, error) {
		s, err := d.Schema(view, 0)
		if err != nil {
			return 0, err
		}
		return strconv.ParseUint(s.Metadata["mv.source_version"], 10, 64)
	}
	// LanceDB commits continuously in the background.
	var (
		mu    sync.Mutex
		last  uint64
		werr  error
		pause sync.Mutex // held by the writer for each commit; the test takes it to pause it
	)
	wctx, wstop := context.WithCancel(ctx)
	wdone := make(chan struct{})
	go func() {
		defer close(wdone)
		gen := lancedbtest.NewOpGen()
		kinds := []lancedbtest.OpKind{lancedbtest.Append, lancedbtest.UpdateAcrossFilter, lancedbtest.Delete, lancedbtest.MergeUpsert}
		for i := 0; wctx.Err() == nil; i++ {
			pause.Lock()
			v, err := d.Apply("src", gen.Next(kinds[i%len(kinds)]))
			pause.Unlock()
			mu.Lock()
			last, werr = v, err
			mu.Unlock()
			if err != nil {
				return
			}
			time.Sleep(5 * time.Millisecond) // a steady writer, not a burst
		}
	}()
	committed := func() uint64 {
		mu.Lock()
		defer mu.Unlock()
		if werr != nil {
			t.Fatalf("LanceDB writer: %v", werr)
		}
		return last
	}
	caughtUp := func(what string) {
		t.Helper()
		target := committed()
		waitUntil(t, what, func() (bool, error) {
			w, err := watermark("v")
			return err == nil && w >= target, err
		})
	}

	caughtUp("view fresh with NATS up")
	if err := ns.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	downAt := committed()
	waitUntil(t, "commits while NATS is away", func() (bool, error) { return committed() >= downAt+6, nil })
	// Checked with the writer paused: the view must not move between
	// reading its watermark and its rows.
	pause.Lock()
	caughtUp("view fresh while NATS is away")
	err = d.CheckViewAtWatermark("v")
	pause.Unlock()
	if err != nil {
		t.Fatalf("while NATS is away: %v", err)
	}
	if ns, err = stream.StartServer(ctx, sc); err != nil {
		t.Fatal(err)
	}
	backAt := committed()
	waitUntil(t, "commits after NATS is back", func() (bool, error) { return committed() >= backAt+4, nil })
	wstop()
	<-wdone
	final := committed()
	caughtUp("view converged")
	if err := d.CheckViewAtWatermark("v"); err != nil {
		t.Fatal(err)
	}

	// The stream has change sets for every source version since the
	// daemon started, and the view's consumer has taken and acked them.
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	subj := stream.Subjects{Prefix: cfg.SubjectPrefix}
	waitUntil(t, "the stream to cover every source version", func() (bool, error) {
		covered, err := coveredVersions(ctx, js, subj)
		if err != nil {
			return false, err
		}
		for v := start + 1; v <= final; v++ {
			if !covered[v] {
				return false, fmt.Errorf("version %d not in the stream", v)
			}
		}
		return true, nil
	})
	cname, _ := stream.ConsumerName("v")
	consumer := func() (*jetstream.ConsumerInfo, error) {
		c, err := js.Consumer(ctx, subj.ChangeSetStream(), cname)
		if err != nil {
			return nil, err
		}
		return c.Info(ctx)
	}
	waitUntil(t, "the view's consumer to resume and take everything", func() (bool, error) {
		info, err := consumer()
		if err != nil {
			return false, err
		}
		return info.NumPending == 0 && info.Delivered.Stream > 0, fmt.Errorf("pending %d, delivered %d", info.NumPending, info.Delivered.Stream)
	})
	// An ack lost with the connection is retried once NATS is back (or,
	// failing that, the ack wait redelivers the change set, which is
	// then skipped and acked).
	waitUntil(t, "the view's consumer to have everything acked", func() (bool, error) {
		info, err := consumer()
		if err != nil {
			return false, err
		}
		return info.NumAckPending == 0, fmt.Errorf("ack pending %d", info.NumAckPending)
	})

	// No view commit reflected a source version twice: the watermarks of
	// the view's versions increase strictly.
	vt, err := lance.Open(ctx, vfs.OS(), filepath.Join(dir, "v.lance"))
	if err != nil {
		t.Fatal(err)
	}
	refs, err := vt.Versions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	prev := uint64(0)
	for _, r := range refs {
		s, err := vt.Checkout(ctx, r.Version)
		if err != nil {
			t.Fatal(err)
		}
		sv, err := strconv.ParseUint(s.Schema.Metadata["mv.source_version"], 10, 64)
		if err != nil {
			continue // the view's creation
		}
		if op, err := s.Operation(ctx); err == nil && op == lance.OpRewrite {
			continue // a compaction keeps the watermark: it reflects nothing new
		}
		if sv <= prev {
			t.Fatalf("view version %d reflects source version %d after %d: applied twice", r.Version, sv, prev)
		}
		prev = sv
	}
	t.Logf("source versions %d..%d, %d view versions", start, final, len(refs))

	// A view created while running gets its consumer; dropped, loses it.
	sel, err := plan.ParseSelect("id, kind, amount")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateView(ctx, "w", "src", matview.Definition{Select: sel}); err != nil {
		t.Fatal(err)
	}
	wname, _ := stream.ConsumerName("w")
	waitUntil(t, "consumer of the new view", func() (bool, error) {
		_, err := js.Consumer(ctx, subj.ChangeSetStream(), wname)
		return err == nil, err
	})
	if err := db.DropView(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "consumer of the dropped view gone", func() (bool, error) {
		_, err := js.Consumer(ctx, subj.ChangeSetStream(), wname)
		return err != nil, err
	})
}

// coveredVersions reads every change set on the stream and returns the
// source versions they cover (From+1..To).
func coveredVersions(ctx context.Context, js jetstream.JetStream, subj stream.Subjects) (map[uint64]bool, error) {
	s, err := js.Stream(ctx, subj.ChangeSetStream())
	if err != nil {
		return nil, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, err
	}
	covered := map[uint64]bool{}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && seq > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			continue // deleted
		}
		cs, err := stream.DecodeChangeSet(m.Data)
		if err != nil {
			return nil, err
		}
		for v := cs.From + 1; v <= cs.To; v++ {
			covered[v] = true
		}
	}
	return covered, nil
}
