package bench

import (
	"context"
	"log/slog"
	"os"
	"path"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/spf13/pflag"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/daemon/wire"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/stream"
	"github.com/mvd-project/mvd/vfs"
)

var soakSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

func soakBatch(lo, hi int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, soakSchema)
	defer b.Release()
	for i := lo; i < hi; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.Float64Builder).Append(float64(i % 100))
	}
	return b.NewRecordBatch()
}

type soakSample struct {
	refreshes  int
	goroutines int
	heapMB     float64
	rssMB      float64
}

func sampleNow(n int) soakSample {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, _, _ := procStatus()
	return soakSample{refreshes: n, goroutines: runtime.NumGoroutine(), heapMB: float64(ms.HeapInuse) / (1 << 20), rssMB: float64(rss) / (1 << 20)}
}

// TestServeSoak drives MVD_SOAK_REFRESHES (default 200; `make bench` runs
// 10,000) refreshes through the daemon (in-process mvd serve: watcher,
// JetStream, owner loop, matview, Badger checkpoints): one single-row
// source commit at a time, each waited for as its refresh notification.
// It samples goroutines, Go heap in use (after GC) and RSS ten times and
// reports them; the goroutine count must stay flat (a leak per refresh
// would show as thousands). Heap and RSS are reported, not asserted: the
// tables gain a fragment per commit (no compaction yet), so manifests
// grow by design, and so does the cost of each refresh (the change set
// compares every fragment; see notes-cdc's finding on lance.Changes):
// the 10,000-refresh run takes tens of minutes on a shared 2-core box.
func TestServeSoak(t *testing.T) {
	n := 200
	if s := os.Getenv("MVD_SOAK_REFRESHES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 10 {
			t.Fatalf("MVD_SOAK_REFRESHES=%q: want a number ≥ 10", s)
		}
		n = v
	}
	ctx := context.Background()
	dir := t.TempDir()
	fsys := vfs.OS()
	ls, err := lance.NewSchemaFromArrow(soakSchema)
	if err != nil {
		t.Fatal(err)
	}
	root := path.Join(dir, "src.lance")
	rec := soakBatch(0, 100)
	frags, err := datawriter.WriteFragments(fsys, root, ls, "2.2", []arrow.RecordBatch{rec})
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	src, _, err := lance.Create(ctx, fsys, root, lance.CreateOptions{Schema: ls, Fragments: frags})
	if err != nil {
		t.Fatal(err)
	}
	db, err := matview.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	sel, _ := plan.ParseSelect("id, amount * 2 AS twice")
	if _, err := db.CreateView(ctx, "v", "src", matview.Definition{Select: sel, Where: "amount >= 50"}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	daemon.BindCommandFlags(fs)
	if err := fs.Parse([]string{"--db", dir, "--admin-addr", "127.0.0.1:0"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := daemon.LoadConfig(fs, nil)
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	deps, err := wire.Deps(cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	srv := daemon.NewServer(cfg, deps)
	drain, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Run(drain, context.Background()) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		if err := deps.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	select {
	case <-srv.Started():
	case err := <-done:
		done <- err
		t.Fatalf("serve: %v", err)
	}
	info := srv.Info()
	conn, err := stream.Connect(ctx, stream.ConnectOptions{URL: info.NATSURL, Token: info.Token})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sub, err := conn.SubscribeRefreshes(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()

	// waitFor reads notifications until the view reflects version v.
	refreshes := 0
	waitFor := func(v uint64) {
		wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		for {
			note, err := sub.Next(wctx)
			if err != nil {
				t.Fatalf("waiting for the refresh to source v%d: %v", v, err)
			}
			if note.Error != "" {
				t.Fatalf("refresh failed: %s", note.Error)
			}
			refreshes++
			if note.SourceVersion >= v {
				return
			}
		}
	}
	m, err := src.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var samples []soakSample
	start := time.Now()
	for i := 0; i < n; i++ {
		if i%(n/10) == 0 {
			s := sampleNow(refreshes)
			samples = append(samples, s)
			t.Logf("after %6d refreshes: %4d goroutines, heap %7.1f MB, RSS %7.1f MB, %s", s.refreshes, s.goroutines, s.heapMB, s.rssMB, time.Since(start).Round(time.Millisecond))
		}
		rec := soakBatch(int64(100+i), int64(101+i))
		frags, err := datawriter.WriteFragments(fsys, root, m.Schema, m.DataFileVersion, []arrow.RecordBatch{rec})
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		if m, err = src.Commit(ctx, m, &lance.Commit{Fragments: frags}); err != nil {
			t.Fatal(err)
		}
		waitFor(m.Version)
	}
	took := time.Since(start)
	samples = append(samples, sampleNow(refreshes))
	s := samples[len(samples)-1]
	t.Logf("after %6d refreshes: %4d goroutines, heap %7.1f MB, RSS %7.1f MB", s.refreshes, s.goroutines, s.heapMB, s.rssMB)
	t.Logf("%d commits, %d refreshes in %s (%.2f ms per commit+refresh)", n, refreshes, took.Round(time.Millisecond), float64(took.Microseconds())/1000/float64(n))
	first, last := samples[1], samples[len(samples)-1] // samples[0] is before the daemon warmed up
	if last.goroutines > first.goroutines+10 {
		t.Errorf("goroutines grew from %d to %d over %d refreshes", first.goroutines, last.goroutines, refreshes)
	}
}
