package lancedbtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"

	"github.com/mvd-project/mvd/arrowjson"
)

// EventsSchema is the schema of the benchmark source `events`
// (testdata/lancedb/lib/events.mjs).
func EventsSchema() arrowjson.Schema {
	return arrowjson.Schema{Fields: []arrowjson.Field{
		{Name: "id", Type: "int64"},
		{Name: "user", Type: "utf8", Nullable: true},
		{Name: "kind", Type: "utf8", Nullable: true},
		{Name: "amount", Type: "float64", Nullable: true},
		{Name: "ts", Type: "timestamp[us]", Nullable: true},
		{Name: "tags", Type: "list", Nullable: true, Children: []arrowjson.Field{{Name: "item", Type: "utf8", Nullable: true}}},
	}}
}

// EventViewNames are the benchmark views, in order.
var EventViewNames = []string{"V1", "V2", "V3"}

// EventViews returns the benchmark views over events as ViewSpecs (the
// same definitions bench_views.mjs gives LanceDB).
func EventViews() map[string]ViewSpec {
	return map[string]ViewSpec{
		"V1": {Select: []Projection{{Name: "id"}, {Name: "user"}, {Name: "amount_cents", Expr: "amount * 100"}}, Where: "kind = 'purchase' AND amount > 10"},
		"V2": {Select: []Projection{{Name: "id"}, {Name: "kind"}, {Name: "amount"}}},
		"V3": {Select: []Projection{{Name: "id"}, {Name: "user"}, {Name: "amount"}}, Where: "kind = 'refund' AND amount > 50", Limit: Limit(1000)},
	}
}

// EventsInfo is what creating the events table reports.
type EventsInfo struct {
	Rows    uint64  `json:"rows"`
	Batch   uint64  `json:"batch"`
	Commits uint64  `json:"commits"`
	WriteMS float64 `json:"write_ms"`
	Version uint64  `json:"version"`
}

// CreateEvents writes table name with rows events (ids 0..rows-1) in
// LanceDB commits of batch rows, with stable row ids (replacing a table of
// that name).
func (d *Driver) CreateEvents(name string, rows, batch uint64, seed int) (EventsInfo, error) {
	var r EventsInfo
	err := d.Call("create_events", map[string]any{"name": name, "rows": rows, "batch": batch, "seed": seed}, &r)
	return r, err
}

// AppendEvents appends events with ids start..start+n-1 in one commit.
func (d *Driver) AppendEvents(table string, start, n uint64, seed int) (uint64, error) {
	return d.versionOf("append_events", map[string]any{"table": table, "start": start, "n": n, "seed": seed})
}

// RefreshSample is one measured LanceDB refresh.
type RefreshSample struct {
	RefreshResult
	MS           float64 `json:"ms"`            // wall time inside the LanceDB process
	RSSBeforeKB  uint64  `json:"rss_before_kb"` // RSS of the process before the refresh
	PeakRSSKB    uint64  `json:"peak_rss_kb"`   // peak RSS during the refresh
	ViewVersions int     `json:"view_versions"` // view versions the refresh committed
}

// MeasureRefresh refreshes a view with LanceDB and measures it.
func (d *Driver) MeasureRefresh(name string, o RefreshOptions) (RefreshSample, error) {
	args := map[string]any{"name": name}
	if o.Full {
		args["full"] = true
	}
	if o.SourceVersion != nil {
		args["source_version"] = *o.SourceVersion
	}
	var r RefreshSample
	err := d.Call("measure_refresh", args, &r)
	return r, err
}

// ViewBenchOptions are bench_views.mjs's arguments.
type ViewBenchOptions struct {
	Dir   string   // database directory
	Rows  uint64   // source rows (5M in the real benchmark; small in CI)
	Batch uint64   // rows per LanceDB commit while writing (100k)
	Reps  int      // repetitions of each operation
	Seed  int      // data and id seed
	Views []string // nil = V1, V2, V3
	Reuse bool     // keep an existing events table of the right size
}

// ViewBench is bench_views.mjs's report.
type ViewBench struct {
	LanceDB string                      `json:"lancedb"`
	Rows    uint64                      `json:"rows"`
	Batch   uint64                      `json:"batch"`
	Seed    int                         `json:"seed"`
	Create  json.RawMessage             `json:"create"`
	Initial map[string]RefreshSample    `json:"initial"`
	Ops     []ViewBenchOp               `json:"ops"`
	Summary map[string]map[string]OpSum `json:"summary"` // op → view → summary
}

// ViewBenchOp is one source operation and LanceDB's refreshes after it.
// Op is one of update_1, delete_1, append_1, append_100k, no_op, full.
type ViewBenchOp struct {
	Op            string                   `json:"op"`
	Rep           int                      `json:"rep"`
	CommitMS      float64                  `json:"commit_ms"`
	SourceVersion uint64                   `json:"source_version"`
	Refresh       map[string]RefreshSample `json:"refresh"`
}

// OpSum summarizes one operation's refreshes of one view.
type OpSum struct {
	MedianMS     float64  `json:"median_ms"`
	MinMS        float64  `json:"min_ms"`
	MaxMS        float64  `json:"max_ms"`
	PeakRSSKB    uint64   `json:"peak_rss_kb"`
	ViewVersions float64  `json:"view_versions"`
	Modes        []string `json:"modes"`
}

// RunViewBench runs LanceDB's side of the view benchmark (harness is
// testdata/lancedb, HarnessDir) and returns its report.
func RunViewBench(ctx context.Context, harness string, o ViewBenchOptions) (*ViewBench, error) {
	args := []string{"--expose-gc", "bench_views.mjs", "--dir", o.Dir}
	add := func(flag string, v uint64) {
		if v > 0 {
			args = append(args, flag, strconv.FormatUint(v, 10))
		}
	}
	add("--rows", o.Rows)
	add("--batch", o.Batch)
	add("--reps", uint64(o.Reps))
	add("--seed", uint64(o.Seed))
	if o.Views != nil {
		args = append(args, "--views", join(o.Views))
	}
	if o.Reuse {
		args = append(args, "--reuse")
	}
	out, err := runNode(ctx, harness, args)
	if err != nil {
		return nil, err
	}
	var b ViewBench
	if err := json.Unmarshal(out, &b); err != nil {
		return nil, fmt.Errorf("bench_views.mjs output: %w", err)
	}
	return &b, nil
}

func runNode(ctx context.Context, harness string, args []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = harness
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("node %v: %w\n%s", args, err, stderr.String())
	}
	return stdout.Bytes(), nil
}
