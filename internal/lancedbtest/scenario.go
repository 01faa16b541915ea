package lancedbtest

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/internal/scenario"
)

// ScenariosDir returns testdata/scenarios.
func ScenariosDir(tb testing.TB) string {
	return filepath.Join(RepoRoot(tb), "testdata", "scenarios")
}

// Records converts a scenario's rows to driver records: standard source
// rows (SourceRow) for the ids, then the JSON rows.
func Records(r scenario.Rows) []Record {
	out := make([]Record, 0, r.Len())
	for _, id := range r.IDs {
		out = append(out, SourceRow(id, r.Variant))
	}
	for _, m := range r.JSON {
		out = append(out, Record(m))
	}
	return out
}

// SourceStep performs a source step of a scenario with LanceDB and returns
// its output (`version=N`, or `ok` for a drop). Every runner performs
// source steps this way.
func (d *Driver) SourceStep(op scenario.Op) (string, error) {
	version := func(v uint64, err error) (string, error) {
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("version=%d", v), nil
	}
	switch o := op.(type) {
	case scenario.SourceCreate:
		return version(d.CreateTableWith(o.Table, SourceSchema(), Records(o.Rows), CreateOptions{NoStableRowIDs: o.NoStableRowIDs}))
	case scenario.SourceAppend:
		return version(d.Add(o.Table, Records(o.Rows)))
	case scenario.SourceDelete:
		return version(d.Delete(o.Table, o.Where))
	case scenario.SourceUpdate:
		set := map[string]string{}
		for _, s := range o.Set {
			set[s[0]] = s[1]
		}
		r, err := d.Update(o.Table, o.Where, set)
		return version(r.Version, err)
	case scenario.SourceUpsert:
		r, err := d.Upsert(o.Table, "id", Records(o.Rows))
		return version(r.Version, err)
	case scenario.SourceDeleteBySource:
		keep := make([]Record, len(o.Keep))
		for i, id := range o.Keep {
			keep[i] = Record{"id": id}
		}
		r, err := d.DeleteBySource(o.Table, "id", keep)
		return version(r.Version, err)
	case scenario.SourceCompact:
		if o.Cleanup {
			return version(d.OptimizeCleanup(o.Table, 0))
		}
		return version(d.Optimize(o.Table))
	case scenario.SourceAddColumn:
		return version(d.AddColumns(o.Table, Column{Name: o.Name, SQL: o.SQL}))
	case scenario.SourceDropColumn:
		return version(d.DropColumns(o.Table, o.Name))
	case scenario.SourceOverwrite:
		return version(d.Overwrite(o.Table, Records(o.Rows)))
	case scenario.SourceIndex:
		return version(d.CreateIndex(o.Table, o.Column, o.Type))
	case scenario.SourceDrop:
		return "ok", d.DropTable(o.Table)
	case scenario.SourceRestore:
		return version(d.Restore(o.Table, o.Version))
	}
	return "", fmt.Errorf("not a source step: %T", op)
}

// ViewStep performs a view step of a scenario with LanceDB (the LanceDB
// runner, and steps prefixed "lancedb" in every runner) and returns its
// output in the scenario's spelling.
func (d *Driver) ViewStep(op scenario.Op) (string, error) {
	switch o := op.(type) {
	case scenario.ViewCreate:
		spec := ViewSpec{Limit: o.Limit}
		if o.Select != nil {
			sel, err := SplitSelect(*o.Select)
			if err != nil {
				return "", err
			}
			spec.Select = sel
		}
		if o.Where != nil {
			spec.Where = *o.Where
		}
		_, err := d.CreateView(o.Name, o.Source, spec)
		return "ok", err
	case scenario.ViewDrop:
		if o.IfExists {
			names, err := d.TableNames()
			if err != nil {
				return "", err
			}
			if !slices.Contains(names, o.Name) {
				return "ok", nil
			}
		}
		return "ok", d.DropTable(o.Name)
	case scenario.ViewList:
		names, err := d.ListViews()
		if err != nil {
			return "", err
		}
		if len(names) == 0 {
			return "(none)", nil
		}
		slices.Sort(names)
		return strings.Join(names, " "), nil
	case scenario.ViewShow:
		def, err := d.ViewDefinition(o.Name)
		if err != nil {
			return "", err
		}
		b, err := json.Marshal(def)
		return string(b), err
	case scenario.Refresh:
		if o.Cascade {
			if err := d.refreshUpstream(o.Name); err != nil {
				return "", err
			}
		}
		r, err := d.Refresh(o.Name, RefreshOptions{Full: o.Full, SourceVersion: o.SourceVersion})
		if err != nil {
			return "", err
		}
		return scenario.FormatRefresh(r.Mode, r.RowsWritten, r.SourceVersion, r.Version), nil
	case scenario.Check:
		return "ok", d.CheckViewAtWatermark(o.Name)
	case scenario.Count:
		n, err := d.Count(o.Name, 0)
		return fmt.Sprintf("rows=%d", n), err
	}
	return "", fmt.Errorf("not a view step: %T", op)
}

// refreshUpstream refreshes, upstream first, every view that view reads
// from, as LanceDB has no cascade of its own.
func (d *Driver) refreshUpstream(view string) error {
	views, err := d.ListViews()
	if err != nil {
		return err
	}
	var chain []string
	for at := view; ; {
		def, err := d.ViewDefinition(at)
		if err != nil {
			return err
		}
		if !slices.Contains(views, def.SourceTable) || slices.Contains(chain, def.SourceTable) {
			break
		}
		chain = append(chain, def.SourceTable)
		at = def.SourceTable
	}
	for i := len(chain) - 1; i >= 0; i-- {
		if _, err := d.Refresh(chain[i], RefreshOptions{}); err != nil {
			return fmt.Errorf("cascade: refresh %s: %w", chain[i], err)
		}
	}
	return nil
}

// CheckViewAtWatermark is CheckView at the source version the view's own
// watermark (mv.source_version) records.
func (d *Driver) CheckViewAtWatermark(view string) error {
	s, err := d.Schema(view, 0)
	if err != nil {
		return err
	}
	w, ok := s.Metadata["mv.source_version"]
	if !ok {
		return fmt.Errorf("view %s has no watermark (never refreshed)", view)
	}
	v, err := strconv.ParseUint(w, 10, 64)
	if err != nil {
		return fmt.Errorf("view %s: bad mv.source_version %q", view, w)
	}
	return d.CheckView(view, v)
}

// ViewEngine performs a scenario's view steps: the engine under test.
// Its output follows the scenario spelling (scenario.FormatRefresh, "ok",
// "rows=N", …). *Driver is LanceDB's; matview's runner adapts mvd.
type ViewEngine interface {
	ViewStep(op scenario.Op) (string, error)
}

// RunScenario runs a scenario file: LanceDB (d) performs the source steps
// and the steps prefixed "lancedb", e every other view step, on d's
// database directory (d.Dir()). Each outcome is checked against the
// scenario's expectation for e: Want, or ForLanceDB when e is a *Driver.
// A failed step is reported and the scenario goes on.
func RunScenario(t *testing.T, path string, d *Driver, e ViewEngine) {
	t.Helper()
	fails, err := ScenarioFailures(path, d, e)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fails {
		t.Error(f)
	}
}

// ScenarioFailures runs a scenario as RunScenario does and returns one
// error per step whose outcome missed its expectation (err: the file does
// not parse).
func ScenarioFailures(path string, d *Driver, e ViewEngine) ([]error, error) {
	f, err := scenario.ParseFile(path)
	if err != nil {
		return nil, err
	}
	_, lance := e.(*Driver)
	var fails []error
	for _, s := range f.Steps {
		var out string
		switch {
		case scenario.IsSource(s.Op):
			out, err = d.SourceStep(s.Op)
		case s.Engine == scenario.LanceDB:
			out, err = d.ViewStep(s.Op)
		default:
			out, err = e.ViewStep(s.Op)
		}
		want := s.Want
		if lance {
			want = s.ForLanceDB()
		}
		if m := want.Match(out, err); m != nil {
			fails = append(fails, fmt.Errorf("%s: %s: %w", s.Pos, s.Line, m))
		}
	}
	return fails, nil
}

// RunScenarioLanceDB runs a scenario file with LanceDB doing every step
// and checks each outcome against what the scenario says LanceDB does
// (Step.ForLanceDB). It validates the scenario files themselves.
func RunScenarioLanceDB(t *testing.T, path string) {
	t.Helper()
	d := StartDriver(t, t.TempDir())
	RunScenario(t, path, d, d)
}
