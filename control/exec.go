package control

import (
	"context"
	"errors"
	"strings"
	"time"

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
	// Now is the clock of the lag SHOW and DESCRIBE report (nil:
	// time.Now).
	Now func() time.Time
}

// Exec parses and runs one statement (a trailing ';' is allowed):
//
//	CREATE MATERIALIZED VIEW [IF NOT EXISTS] v [WITH (auto_refresh_enabled = true|false,
//	    auto_refresh_interval_seconds = N, freshness_target_ms = N, debounce_ms = N)]
//	    AS SELECT … FROM src [WHERE …] [LIMIT n]
//	ALTER MATERIALIZED VIEW v SET (…the same options…)
//	REFRESH MATERIALIZED VIEW v [WITH (full = true, source_version = N, async = true,
//	    cpu_millis = N, memory_bytes = N, gpu_count = N, gpu_class = 'name')]
//	DROP MATERIALIZED VIEW [IF EXISTS] v
//	SHOW MATERIALIZED VIEWS
//	DESCRIBE MATERIALIZED VIEW v
//	SHOW JOBS
//	DESCRIBE JOB id
//	CANCEL JOB id
//
// Every error names a position in stmt: a parse error its token, a
// failure while running the name or option it concerns (StatementError).
// A statement refused (bad options, a budget against the rules, no daemon
// for a job) changes nothing.
func (e *Executor) Exec(ctx context.Context, stmt string) (*Result, error) {
	st, err := sqlexpr.ParseStatement(stmt)
	if err != nil {
		return nil, sqlError(err)
	}
	switch s := st.(type) {
	case *sqlexpr.CreateView:
		return e.create(ctx, s)
	case *sqlexpr.AlterView:
		return e.alter(ctx, s)
	case *sqlexpr.RefreshView:
		return e.refresh(ctx, s)
	case *sqlexpr.DropView:
		return e.drop(ctx, s)
	case *sqlexpr.ShowViews:
		return e.showViews(ctx)
	case *sqlexpr.DescribeView:
		return e.describeView(ctx, s)
	case *sqlexpr.ShowJobs:
		return e.showJobs(ctx)
	case *sqlexpr.DescribeJob:
		return e.describeJob(ctx, s)
	case *sqlexpr.CancelJob:
		return e.cancelJob(ctx, s)
	}
	return nil, sqlError(errors.New("unsupported statement"))
}

func (e *Executor) create(ctx context.Context, s *sqlexpr.CreateView) (*Result, error) {
	if s.FilterEmpty {
		fe := plan.EmptyFilterError("")
		return nil, at(s.WherePos, &matview.Error{Kind: matview.ErrInvalid, Msg: fe.Error(), Err: fe})
	}
	sel, err := plan.FromSelectList(s.Projections)
	if err != nil {
		return nil, at(s.SelectPos, &matview.Error{Kind: matview.ErrInvalid, Msg: err.Error(), Err: err})
	}
	var opts []matview.CreateOption
	if s.Policy.At != nil {
		pol, err := mergePolicy(s.Name, matview.Policy{}, s.Policy)
		if err != nil {
			return nil, err
		}
		opts = append(opts, matview.WithMetadata(pol.Metadata()))
	}
	var v *matview.View
	existed := false
	if s.IfNotExists {
		// A view of that name stays as it is and nothing is changed (a
		// table of that name that is not a view is still refused).
		v, err = e.DB.OpenView(ctx, s.Name)
		existed = err == nil
		if err != nil && !errors.Is(err, matview.ErrNotFound) {
			return nil, at(s.NamePos, err)
		}
	}
	if !existed {
		v, err = e.DB.CreateView(ctx, s.Name, s.Source, matview.Definition{Select: sel, Where: s.FilterSQL, Limit: s.Limit}, opts...)
	}
	if err != nil {
		return nil, at(createErrorPos(s, err), err)
	}
	info, err := v.Info(ctx)
	if err != nil {
		return nil, at(s.NamePos, err)
	}
	r := &Result{Kind: KindCreate, Created: info, Existed: existed}
	if !existed {
		r.Warnings = lanceDBWarnings(info.Definition)
	}
	return r, nil
}

// createErrorPos is where a failed create's error points: the view's name
// when the name is at fault, the source when it is missing or unusable,
// else the definition (SELECT, or WHERE for a filter).
func createErrorPos(s *sqlexpr.CreateView, err error) int {
	msg := err.Error()
	switch {
	case errors.Is(err, matview.ErrExists), errors.Is(err, matview.ErrNotAView), strings.Contains(msg, "'"+s.Name+"'") && !strings.Contains(msg, "'"+s.Source+"'"):
		return s.NamePos
	case errors.Is(err, matview.ErrNotFound) && strings.Contains(msg, "'"+s.Source+"'"), strings.Contains(msg, "row id"):
		return s.SourcePos
	case s.WherePos > 0 && strings.Contains(msg, "filter"):
		return s.WherePos
	}
	return s.SelectPos
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
// uses SQL LanceDB 0.39 cannot plan ("" when it uses none).
func LanceDBWarningLine(view string, d *plan.Definition) string {
	list := plan.LanceDBUnsupported(*d)
	if len(list) == 0 {
		return ""
	}
	return "LanceDB 0.39 cannot refresh view " + view + ": " + strings.Join(list, ", ") +
		" not supported SQL in lance (mvd refreshes it; --lancedb-compatible refuses such definitions)"
}

func (e *Executor) alter(ctx context.Context, s *sqlexpr.AlterView) (*Result, error) {
	v, err := e.DB.OpenView(ctx, s.Name)
	if err != nil {
		return nil, at(s.NamePos, err)
	}
	info, err := v.Info(ctx)
	if err != nil {
		return nil, at(s.NamePos, err)
	}
	base, err := matview.PolicyFromMetadata(info.Metadata)
	if err != nil {
		base = matview.Policy{} // an unreadable stored policy is replaced, as view alter does
	}
	pol, err := mergePolicy(s.Name, base, s.Policy)
	if err != nil {
		return nil, err
	}
	version, err := v.SetMetadata(ctx, pol.Metadata())
	if err != nil {
		return nil, at(s.NamePos, err)
	}
	aj := newAlterJSON(s.Name, pol, info.Metadata, version)
	return &Result{Kind: KindAlter, Altered: &aj, Policy: &pol}, nil
}

func (e *Executor) drop(ctx context.Context, s *sqlexpr.DropView) (*Result, error) {
	name := s.Name
	if err := e.DB.DropView(ctx, s.Name); err != nil {
		if !s.IfExists || !errors.Is(err, matview.ErrNotFound) {
			return nil, at(s.NamePos, err)
		}
		name = ""
	}
	return &Result{Kind: KindDrop, Dropped: &name}, nil
}
