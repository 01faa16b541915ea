package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mvd-project/mvd/cluster"
	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/plan"
)

// clusterDB makes a database of sources src0…src{nsrc-1} (ten rows each)
// and views v0…v{nviews-1}, view i over source i mod nsrc, each refreshed
// once.
func clusterDB(t *testing.T, nsrc, nviews int) (dir string, sources []string) {
	t.Helper()
	dir = t.TempDir()
	for i := range nsrc {
		sources = append(sources, fmt.Sprintf("src%d", i))
		writeRows(t, filepath.Join(dir, sources[i]+lance.TableSuffix), 0, 10)
	}
	db, err := matview.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sel, err := plan.ParseSelect("id")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range nviews {
		v, err := db.CreateView(ctx, fmt.Sprintf("v%d", i), sources[i%nsrc], matview.Definition{Select: sel})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Refresh(ctx, matview.RefreshOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return dir, sources
}

// clusterStatus is GET /v1/cluster of srv.
func clusterStatus(t *testing.T, srv *daemon.Server) (cluster.Status, int) {
	t.Helper()
	resp, err := http.Get("http://" + srv.Info().AdminAddr + "/v1/cluster")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st cluster.Status
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			t.Fatal(err)
		}
	}
	return st, resp.StatusCode
}

// holders maps each view to its lease holder, as srv's /v1/cluster says,
// and reports whether the views of nviews are placed as cluster.Assign
// places them over the members (of which there are members).
func holders(t *testing.T, srv *daemon.Server, nviews, members int) (map[string]string, bool) {
	st, code := clusterStatus(t, srv)
	if code != http.StatusOK || len(st.Members) != members {
		return nil, false
	}
	var ids []string
	for _, m := range st.Members {
		ids = append(ids, m.ID)
	}
	out := map[string]string{}
	for _, l := range st.Leases {
		if l.Kind == cluster.KindView {
			out[l.Name] = l.Holder
		}
	}
	for i := range nviews {
		v := fmt.Sprintf("v%d", i)
		if out[v] != cluster.Preferred(ids, cluster.KindView, v) {
			return out, false
		}
	}
	return out, len(out) == nviews
}

// leasesHeld is srv's mvd_cluster_leases_held{kind}.
func leasesHeld(t *testing.T, srv *daemon.Server, kind cluster.Kind) float64 {
	t.Helper()
	mfs, err := srv.Metrics().Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "mvd_cluster_leases_held" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() == string(kind) {
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no mvd_cluster_leases_held{kind=%q}", kind)
	return 0
}

// viewWatermark is the source version view reflects.
func viewWatermark(t *testing.T, dir, view string) uint64 {
	t.Helper()
	_, wm := viewVersion(t, dir, view)
	return wm
}

// waitViews polls until every view v0…v{n-1} over sources reflects at
// least want[its source]; it returns how long that took.
func waitViews(t *testing.T, dir string, n int, sources []string, want []uint64, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for i := 0; i < n; {
		if viewWatermark(t, dir, fmt.Sprintf("v%d", i)) >= want[i%len(sources)] {
			i++
			continue
		}
		if time.Since(start) > within {
			t.Fatalf("view v%d not refreshed past source version %d within %v", i, want[i%len(sources)], within)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// TestInstancesShareViews (issue 23, several instances): three mvd serve
// on one database and one external NATS share its views: each view has
// exactly one owner, the views spread over the three, and each
// notification names the owner. A fourth instance with a live one's id
// refuses to start, naming it. One that stops hands its views over: they
// are refreshed past the next source commit within 5 s.
func TestInstancesShareViews(t *testing.T) {
	const nviews = 6
	dir, sources := clusterDB(t, 2, nviews)
	url := natsServer(t)
	srvs := map[string]*daemon.Server{}
	stops := map[string]func(){}
	for _, id := range []string{"i1", "i2", "i3"} {
		srv, _, stop := startServeStop(t, "--db", dir, "--nats-url", url, "--instance-id", id, "--lease-ttl", "1s",
			"--state-dir", filepath.Join(t.TempDir(), id), "--admin-addr", "127.0.0.1:0")
		t.Cleanup(stop)
		srvs[id], stops[id] = srv, stop
	}
	var owner map[string]string
	waitUntil(t, "every view owned, by one of three", func() (bool, error) {
		var ok bool
		owner, ok = holders(t, srvs["i1"], nviews, 3)
		return ok, nil
	})
	perInstance := map[string]int{}
	for _, id := range owner {
		perInstance[id]++
	}
	if len(perInstance) < 2 {
		t.Errorf("views placed %v: want them spread", perInstance)
	}
	for id, srv := range srvs {
		if got := leasesHeld(t, srv, cluster.KindView); got != float64(perInstance[id]) {
			t.Errorf("%s: mvd_cluster_leases_held{kind=view} %v, it holds %d", id, got, perInstance[id])
		}
		if ok, why := srv.Ready(); !ok {
			t.Errorf("%s not ready: %s", id, why)
		}
	}

	// Duplicate id: refused, naming the live one.
	cfg := testConfig(t, "--db", dir, "--nats-url", url, "--instance-id", "i2", "--state-dir", filepath.Join(t.TempDir(), "dup"), "--admin-addr", "127.0.0.1:0")
	deps, err := Deps(cfg, quietLog)
	if err != nil {
		t.Fatal(err)
	}
	err = daemon.NewServer(cfg, deps).Run(t.Context(), context.Background())
	_ = deps.Close()
	if !errors.Is(err, cluster.ErrDuplicateID) || !strings.Contains(err.Error(), srvs["i2"].Info().AdminAddr) {
		t.Fatalf("a second i2: %v; want a refusal naming the live i2 (admin %s)", err, srvs["i2"].Info().AdminAddr)
	}

	// Every view is refreshed past a commit of its source, by its owner.
	sub := notesOf(t, url, srvs["i1"].Info().SubjectPrefix)
	want := make([]uint64, len(sources))
	for i, src := range sources {
		want[i] = writeRows(t, filepath.Join(dir, src+lance.TableSuffix), 100, 110)
	}
	waitViews(t, dir, nviews, sources, want, 30*time.Second)
	seen := map[string]bool{}
	for len(seen) < nviews {
		n := nextNote(t, sub)
		if n.Error != "" || n.SourceVersion < want[0] && n.Source == sources[0] || n.SourceVersion < want[1] && n.Source == sources[1] {
			continue
		}
		if n.Instance != owner[n.View] {
			t.Errorf("view %s refreshed by %s; its owner is %s", n.View, n.Instance, owner[n.View])
		}
		seen[n.View] = true
	}

	// The instance owning most views stops: the others take them over.
	victim := ""
	for id, n := range perInstance {
		if victim == "" || n > perInstance[victim] {
			victim = id
		}
	}
	stops[victim]()
	stopped := time.Now()
	for i, src := range sources {
		want[i] = writeRows(t, filepath.Join(dir, src+lance.TableSuffix), 200, 210)
	}
	took := waitViews(t, dir, nviews, sources, want, 30*time.Second)
	t.Logf("%s (owner of %d views) stopped: every view refreshed past the next commit %v later", victim, perInstance[victim], time.Since(stopped))
	if took > 5*time.Second {
		t.Errorf("views refreshed %v after their owner stopped; want within 5s", took)
	}
	var other *daemon.Server
	for id, srv := range srvs {
		if id != victim {
			other = srv
		}
	}
	waitUntil(t, "the views owned by the two left", func() (bool, error) {
		owner, ok := holders(t, other, nviews, 2)
		for _, id := range owner {
			ok = ok && id != victim
		}
		return ok, nil
	})
}
