package wire

import (
	"context"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/stream"
)

func waitUntil(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last error
	for {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (last: %v)", what, last)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestServeEndToEnd runs the whole serve process in-process on real
// parts: LanceDB 0.39 writes a source while the daemon watches it; a view
// mvd created is refreshed by the daemon through matview after every
// write and must equal LanceDB's own evaluation of its definition at the
// watermark; refresh notifications arrive over the embedded NATS server;
// history lands in Badger.
func TestServeEndToEnd(t *testing.T) {
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	ctx := context.Background()
	if _, err := d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, lancedbtest.InitialRows, 0)); err != nil {
		t.Fatal(err)
	}
	db, err := matview.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := plan.ParseSelect("id, upper(name) AS shout, amount")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateView(ctx, "big", "src", matview.Definition{Select: sel, Where: "amount >= 50"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	daemon.BindCommandFlags(fs)
	if err := fs.Parse([]string{"--db", dir, "--admin-addr", "127.0.0.1:0"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := daemon.LoadConfig(fs, nil)
	if err != nil {
		t.Fatal(err)
	}
	deps, err := Deps(cfg, quietLog)
	if err != nil {
		t.Fatal(err)
	}
	srv := daemon.NewServer(cfg, deps)
	drain, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Run(drain, context.Background()) }()
	defer func() {
		stop()
		<-done
	}()
	select {
	case <-srv.Started():
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	info := srv.Info()
	conn, err := stream.Connect(ctx, stream.ConnectOptions{URL: info.NATSURL, Token: info.Token, Name: "test subscriber"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sub, err := conn.SubscribeRefreshes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var notes []*stream.RefreshNotification
	subCtx, subStop := context.WithCancel(ctx)
	subDone := make(chan struct{})
	go func() {
		defer close(subDone)
		for {
			n, err := sub.Next(subCtx)
			if err != nil {
				if subCtx.Err() != nil {
					return
				}
				continue
			}
			mu.Lock()
			notes = append(notes, n)
			mu.Unlock()
		}
	}()
	defer func() { subStop(); <-subDone }()

	watermark := func() (uint64, error) {
		s, err := d.Schema("big", 0)
		if err != nil {
			return 0, err
		}
		return strconv.ParseUint(s.Metadata["mv.source_version"], 10, 64)
	}
	gen := lancedbtest.NewOpGen()
	kinds := []lancedbtest.OpKind{lancedbtest.Append, lancedbtest.UpdateAcrossFilter, lancedbtest.Delete, lancedbtest.MergeUpsert, lancedbtest.Compact, lancedbtest.Append}
	for _, kind := range kinds {
		v, err := d.Apply("src", gen.Next(kind))
		if err != nil {
			t.Fatalf("%v: %v", kind, err)
		}
		waitUntil(t, "view at source version "+strconv.FormatUint(v, 10)+" after "+kind.String(), func() (bool, error) {
			w, err := watermark()
			return err == nil && w == v, err
		})
		if err := d.CheckViewAtWatermark("big"); err != nil {
			t.Fatalf("after %v: %v", kind, err)
		}
	}
	last, _ := watermark()
	waitUntil(t, "notification of the last refresh", func() (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range notes {
			if n.View == "big" && n.SourceVersion == last && n.Source == "src" && n.Error == "" {
				return true, nil
			}
		}
		return false, nil
	})
	waitUntil(t, "ready", func() (bool, error) { ok, _ := srv.Ready(); return ok, nil })

	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	done <- nil
	if err := deps.Close(); err != nil {
		t.Fatal(err)
	}
	store, err := checkpoint.Open(filepath.Join(cfg.StateDir, "state"), checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if b, err := store.LoadSourceState(ctx, "big"); err != nil {
		t.Errorf("no source state kept: %v", err)
	} else if kv, _, err := matview.KeptSourceVersion(b); err != nil || kv != last {
		t.Errorf("source state kept of version %d, %v; want %d", kv, err, last)
	}
	hist, err := store.History(ctx, "big", 100)
	if err != nil || len(hist) < 2 {
		t.Errorf("history %v, %v", hist, err)
	}
}

// startServe runs a serve process in-process with the given flags until
// the test ends.
func startServe(t *testing.T, args ...string) (*daemon.Server, daemon.Config) {
	t.Helper()
	srv, cfg, stop := startServeStop(t, args...)
	t.Cleanup(stop)
	return srv, cfg
}

// startServeStop runs a serve process in-process with the given flags;
// stop drains it and closes its dependencies (once).
func startServeStop(t *testing.T, args ...string) (*daemon.Server, daemon.Config, func()) {
	t.Helper()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	daemon.BindCommandFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	cfg, err := daemon.LoadConfig(fs, nil)
	if err != nil {
		t.Fatal(err)
	}
	deps, err := Deps(cfg, quietLog)
	if err != nil {
		t.Fatal(err)
	}
	srv := daemon.NewServer(cfg, deps)
	drain, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(drain, context.Background()) }()
	var once sync.Once
	end := func() {
		once.Do(func() {
			stop()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
			if err := deps.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
	select {
	case <-srv.Started():
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	return srv, cfg, end
}

// TestTwoServersOneDatabase: two serve processes on one database (each
// with its own state directory) sharing one external nats-server process
// (built from the module in go.mod) share its view: one of them owns it
// (package cluster), refreshes it as LanceDB writes, and the view equals
// LanceDB's evaluation after every write, with no source row twice. No
// refresh conflicts: the two never race for one source step (before the
// view had one owner, both refreshed every step and one lost each time).
func TestTwoServersOneDatabase(t *testing.T) {
	dir := t.TempDir()
	d, db := sourceAndView(t, dir)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	u := natsServer(t)
	a, _ := startServe(t, "--db", dir, "--admin-addr", "127.0.0.1:0", "--state-dir", filepath.Join(t.TempDir(), "a"), "--nats-url", u)
	b, _ := startServe(t, "--db", dir, "--admin-addr", "127.0.0.1:0", "--state-dir", filepath.Join(t.TempDir(), "b"), "--nats-url", u)
	if a.Info().NATSURL != u || b.Info().NATSURL != u {
		t.Fatalf("servers use %q and %q", a.Info().NATSURL, b.Info().NATSURL)
	}
	// Both derive one subject prefix from the one database, and a
	// subscriber on the external server hears both daemons' refreshes.
	if a.Info().SubjectPrefix != b.Info().SubjectPrefix {
		t.Fatalf("one database, subject prefixes %q and %q", a.Info().SubjectPrefix, b.Info().SubjectPrefix)
	}
	conn, err := stream.Connect(ctx, stream.ConnectOptions{URL: u, Name: "test subscriber", Subjects: stream.Subjects{Prefix: a.Info().SubjectPrefix}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sub, err := conn.SubscribeRefreshes(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	watermark := func() (uint64, error) {
		s, err := d.Schema("v", 0)
		if err != nil {
			return 0, err
		}
		return strconv.ParseUint(s.Metadata["mv.source_version"], 10, 64)
	}
	gen := lancedbtest.NewOpGen()
	for i := 0; i < 3; i++ {
		for _, kind := range []lancedbtest.OpKind{lancedbtest.Append, lancedbtest.UpdateAcrossFilter, lancedbtest.Delete, lancedbtest.MergeUpsert} {
			v, err := d.Apply("src", gen.Next(kind))
			if err != nil {
				t.Fatal(err)
			}
			waitUntil(t, "view at "+strconv.FormatUint(v, 10), func() (bool, error) {
				w, err := watermark()
				return err == nil && w == v, err
			})
			if err := d.CheckViewAtWatermark("v"); err != nil {
				t.Fatalf("after %v: %v", kind, err)
			}
		}
	}
	nctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if n, err := sub.Next(nctx); err != nil || n.View != "v" {
		t.Errorf("notification over the external server: %+v, %v", n, err)
	}
	da, ca := refreshCounts(t, a, "v")
	db2, cb := refreshCounts(t, b, "v")
	t.Logf("server a: %v refreshes, %v conflicts; server b: %v refreshes, %v conflicts", da, ca, db2, cb)
	if ca+cb != 0 || da+db2 == 0 {
		t.Errorf("one owner refreshes the view, without conflicts: a %v refreshes (%v conflicts), b %v (%v)", da, ca, db2, cb)
	}
}

// refreshCounts returns how many refreshes of view a server finished and
// how many ended in a conflict.
func refreshCounts(t *testing.T, srv *daemon.Server, view string) (done, conflicts float64) {
	t.Helper()
	for _, m := range seriesOf(t, srv, "mvd_refresh_duration_seconds", map[string]string{"view": view}) {
		done += float64(m.GetHistogram().GetSampleCount())
	}
	return done, metric(t, srv, "mvd_refresh_conflicts_total", view)
}
