package matview

import (
	"context"
	"errors"
	"fmt"

	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/sqlexpr"
)

// StatementResult is what one SQL statement did. Exactly one field is set.
type StatementResult struct {
	// Created is the view a CREATE MATERIALIZED VIEW made.
	Created *Info
	// Refreshed is a REFRESH's result.
	Refreshed *Result
	// Dropped names the view a DROP removed ("" with IF EXISTS and no
	// such view).
	Dropped *string
	// Views lists SHOW MATERIALIZED VIEWS.
	Views []ViewEntry
}

// Exec runs one view statement: CREATE MATERIALIZED VIEW v AS SELECT … FROM
// src [WHERE …] [LIMIT n], REFRESH MATERIALIZED VIEW v [WITH (full = true,
// source_version = N)], DROP MATERIALIZED VIEW [IF EXISTS] v, SHOW
// MATERIALIZED VIEWS. A trailing semicolon is allowed. The control
// plane's statements and options (IF NOT EXISTS, WITH policy options,
// ALTER, DESCRIBE, async, jobs) are refused with ErrUnsupported, never
// ignored: package control runs them.
func (db *DB) Exec(ctx context.Context, stmt string) (*StatementResult, error) {
	st, err := sqlexpr.ParseStatement(stmt)
	if err != nil {
		return nil, errorf(ErrInvalid, err, "%s", sqlText(err))
	}
	switch s := st.(type) {
	case *sqlexpr.CreateView:
		if s.IfNotExists || s.Policy.At != nil {
			return nil, errorf(ErrUnsupported, nil, "CREATE MATERIALIZED VIEW with IF NOT EXISTS or WITH (…) is not supported by DB.Exec: run it through package control (mvd sql)")
		}
		if s.FilterEmpty {
			return nil, errorf(ErrInvalid, plan.EmptyFilterError(""), "%v", plan.EmptyFilterError(""))
		}
		sel, err := plan.FromSelectList(s.Projections)
		if err != nil {
			return nil, errorf(ErrInvalid, err, "%v", err)
		}
		v, err := db.CreateView(ctx, s.Name, s.Source, Definition{Select: sel, Where: s.FilterSQL, Limit: s.Limit})
		if err != nil {
			return nil, err
		}
		info, err := v.Info(ctx)
		if err != nil {
			return nil, err
		}
		return &StatementResult{Created: info}, nil
	case *sqlexpr.RefreshView:
		if s.Async {
			return nil, errorf(ErrUnsupported, nil, "REFRESH option async is not supported by DB.Exec: asynchronous refreshes are jobs of mvd serve (package control)")
		}
		for name, set := range map[string]bool{"cpu_millis": s.CPUMillis != nil, "memory_bytes": s.MemoryBytes != nil,
			"gpu_count": s.GPUCount != nil, "gpu_class": s.GPUClass != nil} {
			if set {
				return nil, errorf(ErrUnsupported, nil, "REFRESH option %s is not supported: mvd refreshes in its own process, without resource budgets", name)
			}
		}
		r, err := db.refreshView(ctx, s.Name, RefreshOptions{Full: s.Full, SourceVersion: s.SourceVersion})
		if err != nil {
			return nil, err
		}
		return &StatementResult{Refreshed: r}, nil
	case *sqlexpr.DropView:
		name := s.Name
		if err := db.DropView(ctx, s.Name); err != nil {
			if s.IfExists && errors.Is(err, ErrNotFound) {
				name = ""
			} else {
				return nil, err
			}
		}
		return &StatementResult{Dropped: &name}, nil
	case *sqlexpr.ShowViews:
		vs, err := db.ListViews(ctx)
		if err != nil {
			return nil, err
		}
		return &StatementResult{Views: vs}, nil
	}
	return nil, errorf(ErrUnsupported, nil, "statement %T is not supported by DB.Exec: run it through package control (mvd sql)", st)
}

// sqlText renders a SQL error with its position, without package prefixes.
func sqlText(err error) string {
	var pe *sqlexpr.PosError
	if errors.As(err, &pe) {
		if errors.Is(pe.Kind, sqlexpr.ErrSyntax) {
			return fmt.Sprintf("SQL syntax error at position %d: %s", pe.Pos, pe.Msg)
		}
		return fmt.Sprintf("SQL at position %d: %s", pe.Pos, pe.Msg)
	}
	return err.Error()
}

// NodeDefinition is a view definition as LanceDB's Node definition()
// returns it, plus mvd's watermark and version.
type NodeDefinition struct {
	SourceTable     string      `json:"sourceTable"`
	Projections     [][2]string `json:"projections"`
	Filter          *string     `json:"filter,omitempty"`
	Limit           *uint64     `json:"limit,omitempty"`
	Inputs          []string    `json:"inputs"`
	SourceNamespace []string    `json:"sourceNamespace"`
	// Watermark is null for a view never refreshed.
	Watermark *NodeWatermark `json:"watermark"`
	// Version is the view's latest version; Rows its live rows.
	Version uint64 `json:"version"`
	Rows    uint64 `json:"rows"`
	// Warnings, set by a create, name what LanceDB 0.39 cannot plan
	// (plan.LanceDBUnsupported); absent when there is nothing to say.
	Warnings []string `json:"warnings,omitempty"`
}

// NodeWatermark is a view's watermark in JSON.
type NodeWatermark struct {
	SourceVersion   uint64 `json:"source_version"`
	SourceVersionTS int64  `json:"source_version_ts"`
	RefreshedAtMs   int64  `json:"refreshed_at_ms"`
	ViewVersion     uint64 `json:"view_version"`
}

// Node returns the view description in the JSON shape of `mvd view show
// --json`.
func (i *Info) Node() NodeDefinition {
	d := i.Definition
	n := NodeDefinition{SourceTable: d.SourceTable, Projections: [][2]string{}, Limit: d.Limit, Inputs: d.Inputs,
		SourceNamespace: d.SourceNamespace, Version: i.Version, Rows: i.Rows}
	if n.Inputs == nil {
		n.Inputs = []string{}
	}
	if n.SourceNamespace == nil {
		n.SourceNamespace = []string{}
	}
	for _, p := range d.Projections {
		n.Projections = append(n.Projections, [2]string{p.Output, p.Expression})
	}
	if d.Filter != "" {
		f := d.Filter
		n.Filter = &f
	}
	if w := i.Watermark; w.Valid {
		n.Watermark = &NodeWatermark{SourceVersion: w.SourceVersion, SourceVersionTS: w.SourceVersionTS, RefreshedAtMs: w.RefreshedAtMs, ViewVersion: w.ViewVersion}
	}
	return n
}

// refreshView refreshes view name through its open handle when there is
// one, which the refresh checks itself (it reads the view's latest version
// first), rather than OpenView checking it and the refresh again: a shell
// driving one refresh after another saves a read of the view's head each.
// A handle whose view was dropped, or dropped and recreated, fails the
// refresh with ErrNotFound; OpenView then replaces it, and the refresh is
// retried once on the new handle.
func (db *DB) refreshView(ctx context.Context, name string, o RefreshOptions) (*Result, error) {
	db.mu.Lock()
	v := db.open[name]
	db.mu.Unlock()
	if v != nil {
		r, err := v.Refresh(ctx, o)
		if !errors.Is(err, ErrNotFound) {
			return r, err
		}
		nv, oerr := db.OpenView(ctx, name)
		if oerr != nil {
			return nil, oerr
		}
		if nv == v {
			return nil, err // not the handle: the source, or a version of it
		}
		v = nv
	} else {
		var err error
		if v, err = db.OpenView(ctx, name); err != nil {
			return nil, err
		}
	}
	return v.Refresh(ctx, o)
}

// Refresh refreshes view name as View.Refresh does, through the view's
// open handle when there is one (a shell driving refresh after refresh
// saves a read of the view's head each; see refreshView).
func (db *DB) Refresh(ctx context.Context, name string, o RefreshOptions) (*Result, error) {
	return db.refreshView(ctx, name, o)
}
