package wire

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/stream"
	"github.com/mvd-project/mvd/vfs"
)

var idSchema = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)

// writeRows creates the table at root (base == nil) or appends to it, with
// mvd's writer, and returns the new version.
func writeRows(t testing.TB, root string, lo, hi int64) uint64 {
	t.Helper()
	ctx := context.Background()
	b := array.NewRecordBuilder(memory.DefaultAllocator, idSchema)
	for i := lo; i < hi; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
	}
	rec := b.NewRecordBatch()
	b.Release()
	schema, err := lance.NewSchemaFromArrow(idSchema)
	if err != nil {
		t.Fatal(err)
	}
	frags, err := datawriter.WriteFragments(vfs.OS(), root, schema, "2.2", []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := lance.Open(ctx, vfs.OS(), root)
	if err != nil {
		_, s, err := lance.Create(ctx, vfs.OS(), root, lance.CreateOptions{Schema: schema, Fragments: frags})
		if err != nil {
			t.Fatal(err)
		}
		return s.Version
	}
	base, err := tbl.Checkout(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tbl.Commit(ctx, base, &lance.Commit{Fragments: frags})
	if err != nil {
		t.Fatal(err)
	}
	return s.Version
}

// latestRefresher stands in for a matview view: it reports the source's
// latest version as reflected, committing nothing.
type latestRefresher struct{ root string }

func (r latestRefresher) Refresh(ctx context.Context, _ daemon.RefreshOptions) (daemon.RefreshResult, error) {
	tbl, err := lance.Open(ctx, vfs.OS(), r.root)
	if err != nil {
		return daemon.RefreshResult{}, err
	}
	v, err := tbl.LatestVersion(ctx)
	if err != nil {
		return daemon.RefreshResult{}, err
	}
	return daemon.RefreshResult{Mode: "incremental", RowsWritten: 1, SourceVersion: v, Version: 1 << 40, CommittedAt: time.Now()}, nil
}

type oneView struct {
	spec daemon.ViewSpec
	r    daemon.Refresher
}

func (c oneView) Views(context.Context) ([]daemon.ViewSpec, error) {
	return []daemon.ViewSpec{c.spec}, nil
}
func (c oneView) View(_ context.Context, name string) (daemon.ViewSpec, bool, error) {
	return c.spec, name == c.spec.Name, nil
}
func (c oneView) Open(context.Context, string) (daemon.Refresher, error) { return c.r, nil }

// TestServerOverNATS: the serve process with the real bus: a source
// commit is published as a change set on the source's subject, and the
// refresh it causes as a notification.
func TestServerOverNATS(t *testing.T) {
	cfg := testConfig(t)
	src := filepath.Join(cfg.DB, "src.lance")
	writeRows(t, src, 0, 3)
	writeRows(t, filepath.Join(cfg.DB, "v.lance"), 0, 1) // the view's table
	deps, err := Deps(cfg, quietLog)
	if err != nil {
		t.Fatal(err)
	}
	deps.Catalog = oneView{spec: daemon.ViewSpec{Name: "v", Source: "src"}, r: latestRefresher{root: src}}
	srv := daemon.NewServer(cfg, deps)
	drain, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(drain, context.Background()) }()
	var once sync.Once
	shutdown := func() {
		once.Do(func() {
			stop()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
			if err := deps.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	defer shutdown()
	<-srv.Started()
	info := srv.Info()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := stream.Connect(ctx, stream.ConnectOptions{URL: info.NATSURL, Token: info.Token})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cons, err := conn.ViewConsumer(ctx, "watcher-test", "src", stream.ConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := conn.SubscribeRefreshes(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for ok, _ := srv.Ready(); !ok; ok, _ = srv.Ready() {
		select {
		case <-ctx.Done():
			t.Fatal("never ready")
		case <-time.After(time.Millisecond):
		}
	}
	v := writeRows(t, src, 3, 5)
	batch, err := cons.Fetch(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	cs := batch.ChangeSets[len(batch.ChangeSets)-1]
	if cs.Source != "src" || cs.To != v || cs.From != v-1 || cs.Inserted.GetCardinality() != 2 || cs.Incarnation == "" || cs.Op != "append" {
		t.Errorf("change set %+v", cs)
	}
	for {
		n, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n.SourceVersion == v {
			if n.View != "v" || n.Source != "src" || n.Mode != "incremental" {
				t.Errorf("notification %+v", n)
			}
			break
		}
	}
	shutdown()
	store, err := checkpointOpen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if h, err := store.History(context.Background(), "v", 1); err != nil || len(h) != 1 || h[0].SourceVersion != v || h[0].Mode != "incremental" {
		t.Errorf("history %+v, %v; want the refresh to version %d", h, err, v)
	}
}
