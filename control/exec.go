package control

import (
	"context"
	"errors"
	"strings"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/sqlexpr"
)

// HistoryFunc returns view's most recent refreshes, newest first, at most
// limit of them (nil when none were recorded).
type HistoryFunc func(ctx context.Context, view string, limit int) ([]checkpoint.RefreshRecord, error)

// Executor runs statements on one database. Its fields are set once,
// before the first Exec; Exec may then be called from many goroutines
// (the database serialises what must be).
type Executor struct {
	// DB is the database the statements act on.
	DB *matview.DB
	// Jobs runs asynchronous refreshes and answers the job statements;
	// nil means no daemon serves the database, and those statements fail
	// with ErrNoDaemon, changing nothing.
	Jobs Jobs
	// History reads the refresh history the daemon records (DESCRIBE and
	// SHOW MATERIALIZED VIEWS show it); nil shows none.
	History HistoryFunc
}

// Exec parses and runs one statement (a trailing ';' is allowed). Every
// error names a position in stmt: a parse error its token, a failure while
// running the name or option it concerns (StatementError).
func (e *Executor) Exec(ctx context.Context, stmt string) (*Result, error) {
	st, err := sqlexpr.ParseStatement(stmt)
	if err != nil {
		return nil, sqlError(err)
	}
	switch s := st.(type) {
	case *sqlexpr.CreateView:
		return e.create(ctx, s)
	case *sqlexpr.RefreshView:
		return e.refresh(ctx, s)
	case *sqlexpr.DropView:
		return e.drop(ctx, s)
	case *sqlexpr.ShowViews:
		return e.showViews(ctx)
	}
	return nil, sqlError(errors.New("unsupported statement"))
}

func (e *Executor) create(ctx context.Context, s *sqlexpr.CreateView) (*Result, error) {
	if s.FilterEmpty {
		return nil, &matview.Error{Kind: matview.ErrInvalid, Msg: plan.EmptyFilterError("").Error(), Err: plan.EmptyFilterError("")}
	}
	sel, err := plan.FromSelectList(s.Projections)
	if err != nil {
		return nil, &matview.Error{Kind: matview.ErrInvalid, Msg: err.Error(), Err: err}
	}
	v, err := e.DB.CreateView(ctx, s.Name, s.Source, matview.Definition{Select: sel, Where: s.FilterSQL, Limit: s.Limit})
	if err != nil {
		return nil, err
	}
	info, err := v.Info(ctx)
	if err != nil {
		return nil, err
	}
	return &Result{Kind: KindCreate, Created: info, Warnings: lanceDBWarnings(info.Definition)}, nil
}

// lanceDBWarnings names what in d LanceDB 0.39 cannot plan.
func lanceDBWarnings(d *plan.Definition) []string {
	list := plan.LanceDBUnsupported(*d)
	if len(list) == 0 {
		return nil
	}
	out := make([]string, len(list))
	for i, c := range list {
		out[i] = "LanceDB 0.39 cannot plan " + c + ": not supported SQL in lance"
	}
	return out
}

// LanceDBWarningLine is the one stderr line that says a created view
// uses SQL LanceDB 0.39 cannot plan (nothing when it uses none).
func LanceDBWarningLine(view string, d *plan.Definition) string {
	list := plan.LanceDBUnsupported(*d)
	if len(list) == 0 {
		return ""
	}
	return "LanceDB 0.39 cannot refresh view " + view + ": " + strings.Join(list, ", ") +
		" not supported SQL in lance (mvd refreshes it; --lancedb-compatible refuses such definitions)"
}

func (e *Executor) refresh(ctx context.Context, s *sqlexpr.RefreshView) (*Result, error) {
	for name, set := range map[string]bool{"cpu_millis": s.CPUMillis != nil, "memory_bytes": s.MemoryBytes != nil,
		"gpu_count": s.GPUCount != nil, "gpu_class": s.GPUClass != nil} {
		if set {
			return nil, &matview.Error{Kind: matview.ErrUnsupported, Msg: "REFRESH option " + name + " is not supported: mvd refreshes in its own process, without resource budgets"}
		}
	}
	r, err := e.DB.Refresh(ctx, s.Name, matview.RefreshOptions{Full: s.Full, SourceVersion: s.SourceVersion})
	if err != nil {
		return nil, err
	}
	r.Warnings = append(r.Warnings, e.DB.Warnings()...)
	return &Result{Kind: KindRefresh, Refreshed: r, Warnings: r.Warnings}, nil
}

func (e *Executor) drop(ctx context.Context, s *sqlexpr.DropView) (*Result, error) {
	name := s.Name
	if err := e.DB.DropView(ctx, s.Name); err != nil {
		if !s.IfExists || !errors.Is(err, matview.ErrNotFound) {
			return nil, err
		}
		name = ""
	}
	return &Result{Kind: KindDrop, Dropped: &name}, nil
}

func (e *Executor) showViews(ctx context.Context) (*Result, error) {
	vs, err := e.DB.ListViews(ctx)
	if err != nil {
		return nil, err
	}
	return &Result{Kind: KindShowViews, Views: vs}, nil
}
