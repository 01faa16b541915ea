package matview

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/internal/scenario"
	"github.com/mvd-project/mvd/plan"
)

// TestScenarios runs the data-driven refresh scenarios of
// testdata/scenarios/*.txt (format: the README there) against mvd: source
// steps and steps marked "lancedb" are done by LanceDB 0.39, view steps by
// mvd. After every successful refresh LanceDB also checks the view holds
// exactly its definition evaluated on the source at the refreshed version.
func TestScenarios(t *testing.T) {
	lancedbtest.Require(t)
	files, err := filepath.Glob(filepath.Join(lancedbtest.RepoRoot(t), "testdata", "scenarios", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runScenario(t, f) })
	}
}

func runScenario(t *testing.T, path string) {
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	lancedbtest.RunScenario(t, path, d, mvdEngine{d: d, db: openDB(t, dir)})
}

// mvdEngine performs a scenario's view steps with mvd.
type mvdEngine struct {
	d  *lancedbtest.Driver
	db *DB
}

func (e mvdEngine) ViewStep(op scenario.Op) (string, error) { return mvdStep(e.d, e.db, op) }

// mvdStep performs a view step with mvd and prints its outcome in the
// scenario's spelling.
func mvdStep(d *lancedbtest.Driver, db *DB, op scenario.Op) (string, error) {
	ctx := context.Background()
	switch o := op.(type) {
	case scenario.ViewCreate:
		var def Definition
		if o.Select != nil {
			sel, err := plan.ParseSelect(*o.Select)
			if err != nil {
				return "", err
			}
			def.Select = sel
		}
		if o.Where != nil {
			def.Where = *o.Where
		}
		def.Limit = o.Limit
		_, err := db.CreateView(ctx, o.Name, o.Source, def)
		return "ok", err
	case scenario.ViewDrop:
		res, err := db.Exec(ctx, fmt.Sprintf("DROP MATERIALIZED VIEW %s%s", map[bool]string{true: "IF EXISTS "}[o.IfExists], o.Name))
		_ = res
		return "ok", err
	case scenario.ViewList:
		vs, err := db.ListViews(context.Background())
		if err != nil {
			return "", err
		}
		var names []string
		for _, v := range vs {
			names = append(names, v.Name)
		}
		if len(names) == 0 {
			return "(none)", nil
		}
		return strings.Join(names, " "), nil
	case scenario.ViewShow:
		v, err := db.OpenView(context.Background(), o.Name)
		if err != nil {
			return "", err
		}
		info, err := v.Info(context.Background())
		if err != nil {
			return "", err
		}
		n := info.Node()
		b, err := json.Marshal(lancedbtest.Definition{SourceTable: n.SourceTable, Projections: n.Projections, Filter: n.Filter,
			Limit: n.Limit, Inputs: n.Inputs, SourceNamespace: n.SourceNamespace})
		return string(b), err
	case scenario.Refresh:
		opts := RefreshOptions{Full: o.Full, SourceVersion: o.SourceVersion}
		var r *Result
		if o.Cascade {
			steps, err := db.RefreshCascade(ctx, o.Name, opts)
			if err != nil {
				return "", err
			}
			for _, s := range steps[:len(steps)-1] {
				if err := d.CheckView(s.View, s.Result.SourceVersion); err != nil {
					return "", fmt.Errorf("upstream %s after the cascade: %w", s.View, err)
				}
			}
			r = steps[len(steps)-1].Result
		} else {
			v, err := db.OpenView(ctx, o.Name)
			if err != nil {
				return "", err
			}
			if r, err = v.Refresh(ctx, opts); err != nil {
				return "", err
			}
		}
		if err := d.CheckView(o.Name, r.SourceVersion); err != nil {
			return "", fmt.Errorf("after the refresh (%+v, %s): %w", r, r.Reason, err)
		}
		return scenario.FormatRefresh(string(r.Mode), r.RowsWritten, r.SourceVersion, r.Version), nil
	case scenario.Check:
		return "ok", d.CheckViewAtWatermark(o.Name)
	case scenario.Count:
		n, err := d.Count(o.Name, 0)
		return fmt.Sprintf("rows=%d", n), err
	}
	return "", fmt.Errorf("not a view step: %T", op)
}
