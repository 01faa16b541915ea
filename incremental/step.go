package incremental

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/provenance"
	"github.com/mvd-project/mvd/rebuild"
)

// Input is one incremental step: bring the view, held at ViewAt and
// indexed by Index, from Changes.From to Changes.To = At.Version.
type Input struct {
	At      *lance.Snapshot // the source at version T
	Changes *lance.ChangeSet
	Plan    *plan.Plan
	ViewAt  *lance.Snapshot   // the view as the step finds it
	Index   *provenance.Index // reflects ViewAt
	Mem     memory.Allocator
}

// Output says what the step changes in the view; the rows themselves went
// to the sink.
type Output struct {
	// Rebuild is non-empty when the step cannot be taken row by row and
	// the view must be rebuilt instead: it says why. Nothing was sent to
	// the sink, and the other fields are unset.
	Rebuild string
	// Evict are the view row ids to delete.
	Evict *roaring64.Bitmap
	// EvictedSources are their source row ids.
	EvictedSources *roaring64.Bitmap
	// Added are the source row ids of the rows sent to the sink, in order.
	Added []uint64
	// Unchanged counts updated source rows whose view row stays as it is
	// (an update of columns the view does not read; uncapped views only).
	Unchanged uint64
	// Refilled counts rows found by scanning the source to refill a capped
	// view whose evictions freed room.
	Refilled uint64
}

// Step computes the step and sends the new view rows to sink, in
// materialization order. Its cost follows the change: reads of the
// changed source rows (appended fragments at scan speed) and takes of the
// view rows they replace, lookups in the index. A capped view (LIMIT n)
// holds the first n matching rows in scan order; its step (cappedStep)
// locates the rows it keeps and refills from the source after the last of
// them, or asks for a rebuild (Output.Rebuild) where that would not give
// the first n.
func Step(ctx context.Context, in Input, sink rebuild.Sink) (*Output, error) {
	if in.Mem == nil {
		in.Mem = memory.DefaultAllocator
	}
	if limit, capped := in.Plan.Limit(); capped {
		return cappedStep(ctx, in, limit, sink)
	}
	return plainStep(ctx, in, sink)
}

// plainRules is what the step of an uncapped view does, decided from the
// change set and the changed rows the view holds before any row is read.
type plainRules struct {
	// read are the source rows to read at the target version: each
	// matching one is a view row.
	read *roaring64.Bitmap
	// compare are held updated rows: their view rows are compared with
	// the recomputed ones, and an equal one stays (not evicted, not
	// written).
	compare *roaring64.Bitmap
	// presize says every row read goes in (no filter, no update that may
	// leave a row as it was): Added is sized once.
	presize bool
}

// decidePlain decides the step of an uncapped view: every changed row
// (inserted or updated) is read and goes in if it matches; held deleted
// and updated rows leave (heldChanged: the held rows among the deleted and
// updated ones), except updated ones whose view row comes out the same.
func decidePlain(cs *lance.ChangeSet, heldChanged *roaring64.Bitmap, filtered bool) plainRules {
	return plainRules{
		read:    roaring64.Or(cs.Inserted, cs.Updated),
		compare: roaring64.And(cs.Updated, heldChanged),
		presize: !filtered && cs.Updated.IsEmpty(),
	}
}

// plainStep is Step for an uncapped view.
func plainStep(ctx context.Context, in Input, sink rebuild.Sink) (*Output, error) {
	cs := in.Changes
	out := &Output{}
	out.Evict, out.EvictedSources = in.Index.ViewRows(roaring64.Or(cs.Deleted, cs.Updated))
	r := decidePlain(cs, out.EvictedSources, in.Plan.FilterColumns() != nil)
	old, err := viewRows(ctx, in, r.compare)
	if err != nil {
		return nil, err
	}
	defer old.release()
	if r.presize {
		// Every inserted row comes in (an append's 100k): sized once
		// rather than regrown (and copied) batch by batch.
		out.Added = make([]uint64, 0, r.read.GetCardinality())
	}
	err = takeEach(ctx, in, r.read, func(rec arrow.RecordBatch) error {
		src := rec.Column(int(rec.NumCols()) - 1).(*array.Uint64)
		stay := keepUnchanged(in, old, out, rec, src)
		if stay == nil {
			// The common case (appends, updates that changed the row):
			// every row goes in as it is, with no per-row bookkeeping.
			out.Added = append(out.Added, src.Uint64Values()...)
			return sink(rec)
		}
		return runs(rec, func(i int) bool {
			s := src.Value(i)
			if stay.Contains(s) {
				return false
			}
			out.Added = append(out.Added, s)
			return true
		}, sink)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// keepUnchanged finds the rows of rec whose view row is unchanged (an
// update of columns the view does not read): they stay where they are, so
// they leave the evictions. It returns them, nil when there are none.
func keepUnchanged(in Input, old *oldRows, out *Output, rec arrow.RecordBatch, src *array.Uint64) *roaring64.Bitmap {
	var stay *roaring64.Bitmap
	for i := 0; i < int(rec.NumRows()) && !old.empty(); i++ {
		s := src.Value(i)
		if !old.same(s, rec, i) {
			continue
		}
		if stay == nil {
			stay = roaring64.New()
		}
		stay.Add(s)
		vid, _ := in.Index.Lookup(s)
		out.Evict.Remove(vid)
		out.EvictedSources.Remove(s)
		out.Unchanged++
	}
	return stay
}

// readOptions are the options of a read of the source for in's plan, and
// the function turning what it reads into view rows: with a filter, late
// materialization, as a rebuild scans (the filter's columns first, the
// projected ones for the rows it keeps only: an append of 100k rows to a
// view keeping 11% of them decodes the view's strings for those 11%).
func readOptions(in Input) (lance.ScanOptions, func(memory.Allocator, arrow.RecordBatch) (arrow.RecordBatch, error)) {
	opts := lance.ScanOptions{Columns: in.Plan.Columns(), RowID: true, Mem: in.Mem}
	fc := in.Plan.FilterColumns()
	if fc == nil {
		return opts, in.Plan.Apply
	}
	opts.Columns = in.Plan.ProjectionColumns()
	opts.Filter = &lance.ScanFilter{
		Columns:      fc,
		Dictionaries: true,
		Select:       func(rec arrow.RecordBatch) ([]int, error) { return in.Plan.Select(in.Mem, rec) },
	}
	return opts, in.Plan.ApplySelected
}

// takeEach reads the rows of ids at the target version (whole fragments
// by scan, the others by take; lance.Snapshot.ReadRows), in scan order,
// applies the plan and calls fn with each non-empty view batch.
func takeEach(ctx context.Context, in Input, ids *roaring64.Bitmap, fn func(arrow.RecordBatch) error) error {
	if ids.IsEmpty() {
		return nil
	}
	opts, apply := readOptions(in)
	rd, err := in.At.ReadRows(ctx, ids, opts)
	if err != nil {
		return fmt.Errorf("read changed source rows at version %d: %w", in.At.Version, err)
	}
	defer rd.Close()
	return applyEach(ctx, in, rd, apply, "read changed source rows", fn)
}

// applyEach applies the plan (apply) to every batch rd reads and calls fn
// with each non-empty view batch, until rd ends or fn fails.
func applyEach(ctx context.Context, in Input, rd lance.BatchReader, apply func(memory.Allocator, arrow.RecordBatch) (arrow.RecordBatch, error), what string, fn func(arrow.RecordBatch) error) error {
	for {
		r, err := rd.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s at version %d: %w", what, in.At.Version, err)
		}
		v, err := apply(in.Mem, r)
		r.Release()
		if err != nil {
			return err
		}
		if v.NumRows() > 0 {
			err = fn(v)
		}
		v.Release()
		if err != nil {
			return err
		}
	}
}

// runs sends the rows of rec for which keep is true to sink, as slices of
// consecutive kept rows. keep is called once per row, in order.
func runs(rec arrow.RecordBatch, keep func(i int) bool, sink rebuild.Sink) error {
	n := int(rec.NumRows())
	start := -1
	for i := 0; i <= n; i++ {
		k := i < n && keep(i)
		if k && start < 0 {
			start = i
		}
		if !k && start >= 0 {
			s := rec.NewSlice(int64(start), int64(i))
			err := sink(s)
			s.Release()
			if err != nil {
				return err
			}
			start = -1
		}
	}
	return nil
}
