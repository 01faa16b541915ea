package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/matview"
)

// TestServeRefreshAfterSourceCleanup: under serve, a manual view over a
// LanceDB table is refreshed through the admin API; the daemon's state
// store keeps the source's state at the watermark; LanceDB updates,
// deletes, then compacts and cleans the watermark's version up; the next
// refresh is incremental and the view equals LanceDB's own evaluation of
// its definition.
func TestServeRefreshAfterSourceCleanup(t *testing.T) {
	lancedbtest.Require(t)
	ctx := context.Background()
	cfg := testConfig(t)
	d := lancedbtest.StartDriver(t, cfg.DB)
	mustV := func(v uint64, err error) uint64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	mustV(d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 40, 0)))
	mustV(d.Delete("src", "id = 1"))
	db, err := matview.Open(cfg.DB)
	if err != nil {
		t.Fatal(err)
	}
	pol := matview.Policy{Mode: matview.Manual}
	if _, err := db.CreateView(ctx, "v", "src", matview.Definition{Where: "score > 200"}, matview.WithMetadata(pol.Metadata())); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	deps, err := Deps(cfg, quietLog)
	if err != nil {
		t.Fatal(err)
	}
	deps.Bus = nil
	store := deps.History.(History).Store
	srv := serveReady(t, cfg, deps)
	refresh := func(want string) daemon.JobResult {
		t.Helper()
		resp, err := http.Post("http://"+srv.Info().AdminAddr+"/v1/views/v/refresh", "application/json", bytes.NewBufferString(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var res daemon.JobResult
		if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != http.StatusOK || res.Mode != want {
			t.Fatalf("refresh: %d %+v, %v; want %s", resp.StatusCode, res, err, want)
		}
		if err := d.CheckViewAtWatermark("v"); err != nil {
			t.Fatal(err)
		}
		return res
	}

	first := refresh("rebuild")
	waitUntil(t, "the source state kept at the watermark", func() (bool, error) {
		b, err := store.LoadSourceState(ctx, "v")
		if err != nil {
			return false, err
		}
		kv, _, err := matview.KeptSourceVersion(b)
		return err == nil && kv == first.SourceVersion, err
	})
	if _, err := d.Update("src", "id IN (3, 4)", map[string]string{"score": "score + 300"}); err != nil {
		t.Fatal(err)
	}
	mustV(d.Delete("src", "id IN (5, 6)"))
	mustV(d.OptimizeCleanup("src", time.Duration(0)))
	if vs, err := d.Versions("src"); err != nil || len(vs) == 0 || vs[0] <= first.SourceVersion {
		t.Fatalf("source versions after cleanup %v, %v: the watermark's version %d is still there", vs, err, first.SourceVersion)
	}
	refresh("incremental")
}
