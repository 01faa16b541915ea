// Package rebuild recomputes a materialized view from scratch: it scans the
// source at one version in LanceDB's scan order, filters, projects and caps
// the rows as the view's plan says, and hands the view batches to a sink
// (matview writes them as the fragments that replace every fragment of the
// view in one commit).
package rebuild

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/budget"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/plan"
)

// Sink receives view batches in materialization order; it must not keep
// the batch past the call without retaining it.
type Sink func(rec arrow.RecordBatch) error

// Run scans source snapshot m through p and sends the view rows to sink,
// stopping at the plan's limit. It returns the number of rows sent.
//
// An uncapped view is rebuilt by a goroutine per CPU, each scanning runs
// of fragments with the filter pushed into the scan (the filter's columns
// decoded first, the projected ones read at the kept rows only); the
// batches still reach sink in scan order. A capped view reads the first
// rows one batch at a time and stops at the cap, its filter pushed into
// the scan the same way.
func Run(ctx context.Context, m *lance.Snapshot, p *plan.Plan, mem memory.Allocator, sink Sink) (uint64, error) {
	return RunWith(ctx, m, p, mem, Options{}, sink)
}

// ScanWorkers is how many goroutines an uncapped view's rebuild scans
// with at most (one per CPU, up to a few), for callers sizing its memory.
func ScanWorkers() int { return applyWorkers() }

// Options bound a rebuild's batch memory (a refresh's memory budget);
// the zero value is the unbounded default.
type Options struct {
	// BatchSize caps the rows of a scanned batch (lance.DefaultBatchSize
	// when 0); with it set, only each batch's rows are decoded, not the
	// whole page holding them (lance.ScanOptions.Narrow).
	BatchSize int
	// Queue is how many view batches a worker may run ahead of the sink
	// (fragmentQueue when 0).
	Queue int
	// Workers caps the scanning goroutines (applyWorkers() when 0; none,
	// the caller scanning alone, when negative).
	Workers int
}

// RunWith is Run within o's bounds. Under a refresh's CPU budget (a
// budget.Limiter in ctx) the scanning goroutines are only those whose
// tokens are free; with none free, the caller scans alone.
func RunWith(ctx context.Context, m *lance.Snapshot, p *plan.Plan, mem memory.Allocator, o Options, sink Sink) (uint64, error) {
	limit, capped := p.Limit()
	if capped && limit == 0 {
		return 0, nil
	}
	if !capped {
		want := applyWorkers()
		if o.Workers != 0 {
			want = max(0, min(want, o.Workers))
		}
		l := budget.From(ctx)
		if workers := l.Acquire(want); workers > 0 {
			return runFragments(ctx, m, p, mem, fragOpts{workers: workers, minRows: jobRows, o: o, limiter: l}, sink)
		}
		// No token free: the caller scans every fragment itself.
		opts, apply := scanPlan(p, mem, o)
		sc, err := m.Scan(ctx, opts)
		if err != nil {
			return 0, fmt.Errorf("scan source version %d: %w", m.Version, err)
		}
		defer sc.Close()
		return feed(ctx, sc.Next, apply, mem, 0, false, sink)
	}
	// A capped view usually needs the first batch or two: those rows are
	// decoded, not the pages holding them, and nothing is read ahead
	// (batches decoded only to be thrown away). A filtered one decodes
	// the filter's columns and reads the projected ones at the first
	// limit rows that pass only.
	opts, apply := scanPlan(p, mem, o)
	opts.Narrow = true
	if opts.Filter != nil {
		opts.Limit = limit // ApplySelected keeps every row it is given
	}
	sc, err := m.Scan(ctx, opts)
	if err != nil {
		return 0, fmt.Errorf("scan source version %d: %w", m.Version, err)
	}
	defer sc.Close()
	return feed(ctx, sc.Next, apply, mem, limit, capped, sink)
}

// scanPlan returns the scan options of a rebuild through p and how each
// scanned batch becomes a view batch: a filtered plan's filter runs in
// the scan (lance.ScanFilter, late materialization) and the batches are
// only projected.
func scanPlan(p *plan.Plan, mem memory.Allocator, o Options) (lance.ScanOptions, applyFunc) {
	opts := lance.ScanOptions{Columns: p.Columns(), RowMeta: true, NoRowVersions: true, Mem: mem, BatchSize: o.BatchSize, Narrow: o.BatchSize > 0}
	fc := p.FilterColumns()
	if fc == nil {
		return opts, p.Apply
	}
	opts.Columns = p.ProjectionColumns()
	opts.Filter = &lance.ScanFilter{
		Columns:      fc,
		Dictionaries: true,
		Select:       func(rec arrow.RecordBatch) ([]int, error) { return p.Select(mem, rec) },
	}
	return opts, p.ApplySelected
}

// applyFunc turns a scanned batch into a view batch (Plan.Apply or
// Plan.ApplySelected).
type applyFunc func(mem memory.Allocator, rec arrow.RecordBatch) (arrow.RecordBatch, error)

// Feed applies p to the batches next returns until io.EOF or until limit
// rows were sent (when capped), and returns the rows sent. The incremental
// operator uses it to refill a capped view from a source scan.
func Feed(ctx context.Context, next func(context.Context) (arrow.RecordBatch, error), p *plan.Plan, mem memory.Allocator, limit uint64, capped bool, sink Sink) (uint64, error) {
	return feed(ctx, next, p.Apply, mem, limit, capped, sink)
}

// feed is Feed with apply making the view batches.
func feed(ctx context.Context, next func(context.Context) (arrow.RecordBatch, error), apply applyFunc, mem memory.Allocator, limit uint64, capped bool, sink Sink) (uint64, error) {
	var sent uint64
	for !capped || sent < limit {
		if err := ctx.Err(); err != nil {
			return sent, err
		}
		rec, err := next(ctx)
		if errors.Is(err, io.EOF) {
			return sent, nil
		}
		if err != nil {
			return sent, err
		}
		out, err := apply(mem, rec)
		rec.Release()
		if err != nil {
			return sent, err
		}
		if capped && sent+uint64(out.NumRows()) > limit {
			cut := out.NewSlice(0, int64(limit-sent))
			out.Release()
			out = cut
		}
		n := uint64(out.NumRows())
		if n > 0 {
			err = sink(out)
		}
		out.Release()
		if err != nil {
			return sent, err
		}
		sent += n
	}
	return sent, nil
}
