package lancedbtest

import (
	"fmt"
	"strings"
	"testing"
)

// Engine is the system under test of the differential op-sequence test:
// it creates and refreshes views over tables LanceDB writes in the same
// database directory. matview's test adapts mvd to it; LanceDBEngine
// adapts LanceDB itself (the harness's own check).
type Engine interface {
	// CreateView creates view name over source with the definition.
	CreateView(name, source string, spec ViewSpec) error
	// Refresh refreshes view name (a rebuild when full).
	Refresh(name string, full bool) (RefreshResult, error)
}

// LanceDBEngine is LanceDB's own views, through a Driver.
type LanceDBEngine struct{ D *Driver }

// CreateView implements Engine.
func (e LanceDBEngine) CreateView(name, source string, spec ViewSpec) error {
	_, err := e.D.CreateView(name, source, spec)
	return err
}

// Refresh implements Engine.
func (e LanceDBEngine) Refresh(name string, full bool) (RefreshResult, error) {
	return e.D.Refresh(name, RefreshOptions{Full: full})
}

// SelectList renders the spec's projections as a SQL select list (bare
// names backtick-quoted when they need it, else `expr AS alias`), the
// --select syntax of mvd; "" when Select is nil (every column).
func (s ViewSpec) SelectList() string {
	parts := make([]string, len(s.Select))
	for i, p := range s.Select {
		if p.Expr == "" {
			parts[i] = quoteIdent(p.Name)
		} else {
			parts[i] = p.Expr + " AS " + quoteIdent(p.Name)
		}
	}
	return strings.Join(parts, ", ")
}

func quoteIdent(s string) string {
	if plainIdent.MatchString(s) {
		return s
	}
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

// RunDifferential runs one op sequence of issue 10's differential test:
// LanceDB creates the standard source "src" (SourceRows(0, InitialRows, 0))
// in d's database, e creates the shape's views, and after every op (done
// by LanceDB) e refreshes each view in order; each view must then hold its
// definition evaluated by LanceDB on its source at the reported source
// version (a limited view: a subset of size min(limit, n)), read by
// LanceDB. At the end a full rebuild of the target view must equal the
// incremental result (for a limited view: both are checked against the
// oracle, as they may keep different rows). The database must be empty.
func RunDifferential(t testing.TB, d *Driver, e Engine, shape ViewShape, kinds []OpKind) {
	t.Helper()
	if err := differential(d, e, shape, kinds); err != nil {
		t.Fatalf("%s / %s: %v", shape.Name, SequenceName(kinds), err)
	}
}

func differential(d *Driver, e Engine, shape ViewShape, kinds []OpKind) error {
	if _, err := d.CreateTable("src", SourceSchema(), SourceRows(0, InitialRows, 0)); err != nil {
		return fmt.Errorf("create source: %w", err)
	}
	for _, v := range shape.Views {
		if err := e.CreateView(v.Name, v.Source, v.Spec); err != nil {
			return fmt.Errorf("create view %s: %w", v.Name, err)
		}
	}
	refreshAll := func(step string) error {
		for _, v := range shape.Views {
			r, err := e.Refresh(v.Name, false)
			if err != nil {
				return fmt.Errorf("after %s: refresh %s: %w", step, v.Name, err)
			}
			if err := d.CheckView(v.Name, r.SourceVersion); err != nil {
				return fmt.Errorf("after %s: refresh %s (%s): %w", step, v.Name, r.Mode, err)
			}
		}
		return nil
	}
	if err := refreshAll("create"); err != nil {
		return err
	}
	for i, op := range Ops(kinds) {
		if _, err := d.Apply("src", op); err != nil {
			return fmt.Errorf("op %d %s: %w", i+1, op, err)
		}
		if err := refreshAll(fmt.Sprintf("op %d %s", i+1, op)); err != nil {
			return err
		}
	}
	target := shape.Target()
	incremental, err := d.Read(target.Name, ReadOptions{})
	if err != nil {
		return err
	}
	r, err := e.Refresh(target.Name, true)
	if err != nil {
		return fmt.Errorf("full refresh %s: %w", target.Name, err)
	}
	if r.Mode != "rebuild" {
		return fmt.Errorf("full refresh %s: mode %s", target.Name, r.Mode)
	}
	if err := d.CheckView(target.Name, r.SourceVersion); err != nil {
		return fmt.Errorf("full refresh %s: %w", target.Name, err)
	}
	if target.Spec.Limit != nil {
		return nil
	}
	full, err := d.Read(target.Name, ReadOptions{})
	if err != nil {
		return err
	}
	if err := CompareView(incremental.Rows, full.Rows, nil); err != nil {
		return fmt.Errorf("incremental result vs full rebuild of %s: %w", target.Name, err)
	}
	return nil
}
