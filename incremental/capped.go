package incremental

import (
	"context"
	"errors"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/rebuild"
)

// A capped view (LIMIT n) holds what LanceDB's query with that limit
// returns at the watermark: the first n matching rows in scan order
// (fragment order, then offset). Between two source versions:
//
//   - a deleted row is gone;
//   - an updated row has moved to the fragment its update wrote, after
//     every fragment that existed before (a Lance update rewrites rows);
//   - an appended row is in a new fragment, at the end;
//   - a compaction rewrites adjacent fragments in place, keeping the rows'
//     order and ids.
//
// So the held rows that were neither deleted nor updated (the kept rows)
// are still the first matching ones up to the last of them, and the rows
// after it in scan order (unheld rows past the cap, updated and appended
// rows) are what fills the room the evictions freed. The exception is a
// changed row that sits before the last kept row (an update written in
// place, an append folded into a compaction of older fragments): the
// first n are then not the kept rows plus what follows, and the view is
// rebuilt.

// position is where a row sits in a version's scan order: the index of its
// fragment in the manifest's fragment list, and its physical offset there.
type position struct {
	frag int
	off  uint64
}

// capFacts is what decides a capped view's step, found at the target
// version from row metadata alone (row-id sequences, deletion files).
type capFacts struct {
	limit   uint64 // the cap
	held    uint64 // rows the view holds before the step
	evicted uint64 // of those, rows deleted or updated
	// last is where the last kept row sits at the target version; nil
	// when no held row is kept.
	last *position
	// lost counts kept rows that are not live at the target version,
	// though the change set neither deleted nor updated them.
	lost uint64
	// changedBefore says an inserted or updated row sits before last.
	changedBefore bool
}

// refillKind says where a capped view's freed room is refilled from.
type refillKind int

const (
	refillNone    refillKind = iota // no room, or nothing can fill it
	refillChanged                   // the changed rows only (every matching row was held)
	refillScan                      // a scan from fragment capRules.from on
)

// capRules is what a capped view's step does.
type capRules struct {
	// rebuild is non-empty when the step cannot keep the first rows in
	// scan order row by row: it says why.
	rebuild string
	room    uint64 // rows to add
	refill  refillKind
	from    int // refillScan: index of the first fragment scanned
}

// decideCapped decides a capped view's step from its facts.
func decideCapped(f capFacts) capRules {
	switch {
	case f.lost > 0:
		return capRules{rebuild: fmt.Sprintf("%d rows the capped view holds are no longer in the source, though no change deleted or updated them", f.lost)}
	case f.changedBefore:
		return capRules{rebuild: "a row inserted or updated in place sits before the last row the capped view keeps (scan order)"}
	}
	kept := f.held - min(f.held, f.evicted)
	r := capRules{room: f.limit - min(f.limit, kept)}
	switch {
	case r.room == 0:
	case f.held < f.limit:
		// The view held every matching row: an unchanged row that was
		// not held does not match, so only changed rows can come in.
		r.refill = refillChanged
	case f.last == nil:
		r.refill = refillScan // nothing kept: the first rows, from the start
	default:
		r.refill, r.from = refillScan, f.last.frag
	}
	return r
}

// cappedStep is Step for a view capped at limit rows.
func cappedStep(ctx context.Context, in Input, limit uint64, sink rebuild.Sink) (*Output, error) {
	cs := in.Changes
	out := &Output{}
	out.Evict, out.EvictedSources = in.Index.ViewRows(roaring64.Or(cs.Deleted, cs.Updated))
	kept := in.Index.Sources()
	kept.AndNot(out.EvictedSources)
	changed := roaring64.Or(cs.Inserted, cs.Updated)
	f, err := capFactsAt(ctx, in.At, kept, changed)
	if err != nil {
		return nil, err
	}
	f.limit, f.held, f.evicted = limit, in.ViewAt.LiveRows(), out.Evict.GetCardinality()
	r := decideCapped(f)
	if r.rebuild != "" {
		return &Output{Rebuild: r.rebuild}, nil
	}
	fill := &filler{room: r.room, skip: kept, out: out, sink: sink}
	switch r.refill {
	case refillChanged:
		err = takeEach(ctx, in, changed, fill.take)
	case refillScan:
		err = scanFrom(ctx, in, r.from, fill.take)
		out.Refilled = uint64(len(out.Added))
	}
	if err != nil && !errors.Is(err, errRoomFilled) {
		return nil, err
	}
	return out, nil
}

// capFactsAt locates the kept rows at the target version at and looks for
// a changed row before the last of them.
func capFactsAt(ctx context.Context, at *lance.Snapshot, kept, changed *roaring64.Bitmap) (capFacts, error) {
	var f capFacts
	if kept.IsEmpty() {
		return f, nil
	}
	locs, missing, err := at.Locate(ctx, kept)
	if err != nil {
		return f, fmt.Errorf("locate the rows the capped view keeps at source version %d: %w", at.Version, err)
	}
	f.lost = missing.GetCardinality()
	if len(locs) == 0 {
		return f, nil
	}
	l := locs[len(locs)-1] // Locate returns them in scan order
	i := fragmentIndex(at, l.Fragment.ID)
	if i < 0 {
		f.lost++ // located in no fragment of the version: cannot be placed
		return f, nil
	}
	f.last = &position{frag: i, off: l.Offset}
	f.changedBefore, err = changedBefore(ctx, at, changed, *f.last)
	return f, err
}

// fragmentIndex returns the index of fragment id in at's fragment list.
func fragmentIndex(at *lance.Snapshot, id uint64) int {
	for i, f := range at.Fragments {
		if f.ID == id {
			return i
		}
	}
	return -1
}

// changedBefore reports whether a live row of changed sits before p in at's
// scan order, from row metadata: by locating the changed rows (a cost that
// follows them) when they are fewer than the rows before p, else by
// looking at the row ids before p.
func changedBefore(ctx context.Context, at *lance.Snapshot, changed *roaring64.Bitmap, p position) (bool, error) {
	if changed.IsEmpty() {
		return false, nil
	}
	prefix := p.off
	for _, f := range at.Fragments[:min(p.frag, len(at.Fragments))] {
		prefix += f.PhysicalRows
	}
	if changed.GetCardinality() <= prefix {
		locs, _, err := at.Locate(ctx, changed)
		if err != nil {
			return false, fmt.Errorf("locate the changed rows at source version %d: %w", at.Version, err)
		}
		if len(locs) == 0 {
			return false, nil
		}
		i := fragmentIndex(at, locs[0].Fragment.ID) // the first in scan order
		return i < p.frag || i == p.frag && locs[0].Offset < p.off, nil
	}
	for i := 0; i <= p.frag && i < len(at.Fragments); i++ {
		fr, err := at.FragmentRows(ctx, at.Fragments[i])
		if err != nil {
			return false, fmt.Errorf("read the row ids of source version %d: %w", at.Version, err)
		}
		end := fr.Fragment.PhysicalRows
		if i == p.frag {
			end = p.off
		}
		if beforeInFragment(fr, changed, end) {
			return true, nil
		}
	}
	return false, nil
}

// beforeInFragment reports whether a live row of changed sits in fr
// before offset end.
func beforeInFragment(fr *lance.FragmentRows, changed *roaring64.Bitmap, end uint64) bool {
	for off := uint64(0); off < end; off++ {
		if !fr.Deleted.Contains(uint32(off)) && changed.Contains(fr.RowID(off)) {
			return true
		}
	}
	return false
}

// scanFrom scans the source at the target version from the fragment at
// index from on, in scan order, applies the plan and calls fn with each
// non-empty view batch.
func scanFrom(ctx context.Context, in Input, from int, fn func(arrow.RecordBatch) error) error {
	opts, apply := readOptions(in)
	// A refill usually needs a batch or two: those rows are decoded, not
	// the pages holding them.
	opts.Narrow = true
	if from > 0 {
		for _, f := range in.At.Fragments[from:] {
			opts.Fragments = append(opts.Fragments, f.ID)
		}
	}
	sc, err := in.At.Scan(ctx, opts)
	if err != nil {
		return fmt.Errorf("refill from source version %d: %w", in.At.Version, err)
	}
	defer sc.Close()
	return applyEach(ctx, in, sc, apply, "refill from the source", fn)
}

// filler sends view rows to the sink, in the order given, until the room
// is filled, leaving out the rows the view keeps.
type filler struct {
	room uint64
	skip *roaring64.Bitmap
	out  *Output
	sink rebuild.Sink
}

// errRoomFilled ends a refill's read once the room is filled.
var errRoomFilled = errors.New("room filled")

func (f *filler) take(rec arrow.RecordBatch) error {
	src := rec.Column(int(rec.NumCols()) - 1).(*array.Uint64)
	err := runs(rec, func(i int) bool {
		s := src.Value(i)
		if f.room == 0 || f.skip.Contains(s) {
			return false
		}
		f.room--
		f.out.Added = append(f.out.Added, s)
		return true
	}, f.sink)
	if err == nil && f.room == 0 {
		return errRoomFilled
	}
	return err
}
