package wire

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/matview"
)

// TestServeCleansUpViews: under serve, views created with a retention of
// 2s and 5 versions, fed one-row LanceDB commits, lose their old versions
// within seconds of the retention allowing it, with no further commit to
// wake them: each ends with exactly 5 versions on disk, exactly its
// definition's rows, LanceDB's refresh a no_op, every source version
// still there, and the cleanups and the fragments, versions and bytes
// gauges on /metrics as they are on disk.
func TestServeCleansUpViews(t *testing.T) {
	lancedbtest.Require(t)
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	ctx := context.Background()
	if _, err := d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 50, 0)); err != nil {
		t.Fatal(err)
	}
	db, err := matview.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	keep := matview.WithMetadata(matview.Retention{KeepFor: 2 * time.Second, Keep: 5}.Metadata())
	if _, err := db.CreateView(ctx, "all", "src", matview.Definition{}, keep); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateView(ctx, "filt", "src", matview.Definition{Where: "amount >= 50"}, keep); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	srv, _ := startServe(t, "--db", dir, "--admin-addr", "127.0.0.1:0")
	db2, err := matview.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	var last uint64
	for i := int64(50); i < 80; i++ {
		if i%10 == 5 {
			last, err = d.Delete("src", fmt.Sprintf("id = %d", i-40))
		} else {
			last, err = d.Add("src", lancedbtest.SourceRows(i, i+1, 0))
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"all", "filt"} {
			waitUntil(t, fmt.Sprintf("%s at source version %d", name, last), func() (bool, error) {
				wm, err := db2.Watermark(ctx, name)
				return err == nil && wm.SourceVersion >= last, err
			})
		}
	}
	for _, name := range []string{"all", "filt"} {
		v, err := db2.OpenView(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		waitUntil(t, name+" down to 5 versions", func() (bool, error) {
			st, err := v.Storage(ctx)
			return err == nil && st.Versions == 5 && metric(t, srv, "mvd_view_versions", name) == 5, fmt.Errorf("%+v, %v", st, err)
		})
		st, err := v.Storage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		waitUntil(t, name+" storage gauges", func() (bool, error) {
			return metric(t, srv, "mvd_view_fragments", name) == float64(st.Fragments) && metric(t, srv, "mvd_view_bytes", name) == float64(st.Bytes), nil
		})
		if n := metric(t, srv, "mvd_view_cleanups_total", name); n == 0 || metric(t, srv, "mvd_view_cleanup_bytes_reclaimed_total", name) == 0 {
			t.Errorf("%s: %v cleanups counted, none reclaiming bytes", name, n)
		}
		if err := d.CheckView(name, last); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		lv, err := d.Versions(name)
		if err != nil || len(lv) != 5 {
			t.Fatalf("%s: LanceDB lists versions %v (%v)", name, lv, err)
		}
		if lr, err := d.Refresh(name, lancedbtest.RefreshOptions{}); err != nil || lr.Mode != "no_op" {
			t.Fatalf("%s: LanceDB refresh after the daemon's cleanups: %+v, %v", name, lr, err)
		}
	}
	sv, err := d.Versions("src")
	if err != nil || len(sv) != int(last) || !slices.IsSorted(sv) || sv[0] != 1 {
		t.Fatalf("the source lost versions: %v (%v), want 1..%d", sv, err, last)
	}
}

// metric sums the values of the series of a counter or gauge for view.
func metric(t *testing.T, srv *daemon.Server, name, view string) float64 {
	t.Helper()
	var n float64
	for _, m := range seriesOf(t, srv, name, map[string]string{"view": view}) {
		n += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return n
}

// seriesOf gathers the server's metrics and returns the series of name
// that carry every label of labels.
func seriesOf(t *testing.T, srv *daemon.Server, name string, labels map[string]string) []*dto.Metric {
	t.Helper()
	mfs, err := srv.Metrics().Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []*dto.Metric
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			matched := 0
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; ok && v == l.GetValue() {
					matched++
				}
			}
			if matched == len(labels) {
				out = append(out, m)
			}
		}
	}
	return out
}
