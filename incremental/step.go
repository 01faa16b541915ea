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
	// Evict are the view row ids to delete.
	Evict *roaring64.Bitmap
	// EvictedSources are their source row ids.
	EvictedSources *roaring64.Bitmap
	// Added are the source row ids of the rows sent to the sink, in order.
	Added []uint64
	// Unchanged counts updated source rows whose view row stays as it is
	// (an update of columns the view does not read).
	Unchanged uint64
	// Refilled counts rows found by scanning the source to refill a capped
	// view whose evictions freed room.
	Refilled uint64
}

// Step computes the step and sends the new view rows to sink, in
// materialization order. Its cost follows the change: reads of the
// changed source rows (appended fragments at scan speed) and takes of the
// view rows they replace, lookups in the
// index; only a capped view that evictions left with room scans the
// source, and only until the room is filled.
func Step(ctx context.Context, in Input, sink rebuild.Sink) (*Output, error) {
	mem := in.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	cs := in.Changes
	out := &Output{}
	gone := roaring64.Or(cs.Deleted, cs.Updated)
	out.Evict, out.EvictedSources = in.Index.ViewRows(gone)

	// Updated rows the view holds: their current view rows, to keep the
	// ones an update left unchanged.
	heldUpdated := roaring64.And(cs.Updated, out.EvictedSources)
	old, err := viewRows(ctx, in, heldUpdated)
	if err != nil {
		return nil, err
	}
	defer old.release()

	limit, capped := in.Plan.Limit()
	held := in.ViewAt.LiveRows()
	complete := !capped || held < limit
	var room uint64
	if capped {
		// Unchanged rows are kept, so only real evictions free room.
		after := held - min(held, out.Evict.GetCardinality())
		room = limit - min(limit, after)
	}
	emitted := roaring64.New()

	cands := roaring64.Or(cs.Inserted, cs.Updated)
	if capped && room == 0 {
		// A full view with nothing evicted: no row can come in, so only the
		// held rows' updates are read (to see which are unchanged).
		cands = heldUpdated.Clone()
	}
	if !capped && in.Plan.FilterColumns() == nil && cs.Updated.IsEmpty() {
		// Every inserted row comes in (an append's 100k): sized once
		// rather than regrown (and copied) batch by batch. (Updated rows
		// may stay as they are, so they do not count.)
		out.Added = make([]uint64, 0, cands.GetCardinality())
	}
	var deferred []arrow.RecordBatch // capped: rows not held before wait their turn
	defer func() {
		for _, r := range deferred {
			r.Release()
		}
	}()
	emit := func(rec arrow.RecordBatch, keep func(src uint64) bool) error {
		src := rec.Column(int(rec.NumCols()) - 1).(*array.Uint64)
		return runs(rec, func(i int) bool {
			s := src.Value(i)
			if !keep(s) {
				return false
			}
			if capped && room == 0 {
				return false
			}
			room -= min(room, 1)
			emitted.Add(s)
			out.Added = append(out.Added, s)
			return true
		}, sink)
	}
	err = takeEach(ctx, in, cands, mem, func(rec arrow.RecordBatch) error {
		src := rec.Column(int(rec.NumCols()) - 1).(*array.Uint64)
		// Drop updated rows whose view row is unchanged: they stay.
		unchanged := 0
		for i := 0; i < int(rec.NumRows()) && !old.empty(); i++ {
			s := src.Value(i)
			if old.same(s, rec, i) {
				unchanged++
				vid, _ := in.Index.Lookup(s)
				out.Evict.Remove(vid)
				out.EvictedSources.Remove(s)
				out.Unchanged++
				emitted.Add(s) // already in the view
				if capped {
					room -= min(room, 1)
				}
			}
		}
		if capped {
			rec.Retain()
			deferred = append(deferred, rec)
			return nil
		}
		if unchanged == 0 {
			// The common case (appends, updates that changed the row):
			// every row goes in as it is, with no per-row bookkeeping.
			out.Added = append(out.Added, src.Uint64Values()...)
			return sink(rec)
		}
		return emit(rec, func(s uint64) bool { return !emitted.Contains(s) })
	})
	if err != nil {
		return nil, err
	}
	if capped {
		// Rows the view held before come back first, then the others, in
		// source scan order, while there is room.
		for _, pass := range []bool{true, false} {
			for _, rec := range deferred {
				p := pass
				if err := emit(rec, func(s uint64) bool {
					return !emitted.Contains(s) && heldUpdated.Contains(s) == p
				}); err != nil {
					return nil, err
				}
			}
		}
	}
	if capped && room > 0 && !complete {
		n, err := refill(ctx, in, mem, &room, emitted, out, sink)
		if err != nil {
			return nil, err
		}
		out.Refilled = n
	}
	return out, nil
}

// takeEach reads the rows of ids at the target version (whole fragments
// by scan, the others by take; lance.Snapshot.ReadRows), applies the plan
// and calls fn with each non-empty view batch.
func takeEach(ctx context.Context, in Input, ids *roaring64.Bitmap, mem memory.Allocator, fn func(arrow.RecordBatch) error) error {
	if ids.IsEmpty() {
		return nil
	}
	opts := lance.ScanOptions{Columns: in.Plan.Columns(), RowID: true, Mem: mem}
	apply := in.Plan.Apply
	if fc := in.Plan.FilterColumns(); fc != nil {
		// Late materialization, as a rebuild scans: the filter's columns
		// first, the projected ones for the rows it keeps only (an append
		// of 100k rows to a view keeping 11% of them decodes the view's
		// strings for those 11%).
		opts.Columns = in.Plan.ProjectionColumns()
		opts.Filter = &lance.ScanFilter{
			Columns:      fc,
			Dictionaries: true,
			Select:       func(rec arrow.RecordBatch) ([]int, error) { return in.Plan.Select(mem, rec) },
		}
		apply = in.Plan.ApplySelected
	}
	rd, err := in.At.ReadRows(ctx, ids, opts)
	if err != nil {
		return fmt.Errorf("read changed source rows at version %d: %w", in.At.Version, err)
	}
	defer rd.Close()
	for {
		r, err := rd.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read changed source rows at version %d: %w", in.At.Version, err)
		}
		v, err := apply(mem, r)
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

// refill scans the source at the target version for rows the view does
// not hold, until the room is filled.
func refill(ctx context.Context, in Input, mem memory.Allocator, room *uint64, emitted *roaring64.Bitmap, out *Output, sink rebuild.Sink) (uint64, error) {
	sc, err := in.At.Scan(ctx, lance.ScanOptions{Columns: in.Plan.Columns(), RowID: true, Mem: mem})
	if err != nil {
		return 0, err
	}
	defer sc.Close()
	var n uint64
	heldNow := func(s uint64) bool {
		return emitted.Contains(s) || (in.Index.Contains(s) && !out.EvictedSources.Contains(s))
	}
	_, err = rebuild.Feed(ctx, sc.Next, in.Plan, mem, 0, false, func(rec arrow.RecordBatch) error {
		src := rec.Column(int(rec.NumCols()) - 1).(*array.Uint64)
		err := runs(rec, func(i int) bool {
			s := src.Value(i)
			if *room == 0 || heldNow(s) {
				return false
			}
			*room--
			n++
			emitted.Add(s)
			out.Added = append(out.Added, s)
			return true
		}, sink)
		if err == nil && *room == 0 {
			return errRoomFilled
		}
		return err
	})
	if err == errRoomFilled {
		err = nil
	}
	return n, err
}

var errRoomFilled = fmt.Errorf("room filled")

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
