package lance

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/mvd-project/mvd/lance/internal/rowid"
)

// readTakeChunk bounds the rows of one batch a RowReader takes from a
// fragment it does not read whole.
const readTakeChunk = 1 << 16

// ReadRows streams the live rows of the snapshot whose row ids are in ids,
// in scan order, like Take, but chooses per fragment how to read them: a
// fragment every one of whose rows is asked for (an appended fragment, the
// fragment an update rewrote its rows to) is scanned — pages decoded in
// sequence, in batches of opts.BatchSize — and the others are taken row by
// row, in batches of at most 64Ki rows. Fragments whose row ids cannot
// hold any of ids are skipped after decoding their row-id sequence alone.
// opts.Columns, RowMeta, RowID, BatchSize, Filter and Mem apply; Limit and
// Fragments do not. With a Filter, whole fragments are scanned filtered
// (late materialization) and taken rows are filtered after the take, so
// every batch holds the selected rows only. Ids not live at the snapshot
// are not reported (Take does that).
// This is what an incremental refresh reads its changed rows with: its
// cost follows the rows asked for, and whole fragments read at scan speed.
func (snap *Snapshot) ReadRows(ctx context.Context, ids *roaring64.Bitmap, opts ScanOptions) (*RowReader, error) {
	if err := snap.ctxErr(ctx, "read rows"); err != nil {
		return nil, err
	}
	opts.Limit, opts.Fragments = 0, nil
	s, err := snap.newScanner(opts)
	if err != nil {
		return nil, err
	}
	r := &RowReader{scan: s, take: s, ids: ids, want: ids.GetCardinality()}
	if snap.StableRowIDs() && r.want <= startFromEndIDs {
		if r.frag, err = snap.firstHolding(ctx, ids, r.want); err != nil {
			return nil, err
		}
	}
	if f := opts.Filter; f != nil {
		// Takes read the output columns and then the filter's.
		o := opts
		o.Filter = nil
		o.Columns = make([]string, 0, len(s.fields)+len(f.Columns))
		for _, sf := range s.fields {
			o.Columns = append(o.Columns, sf.field.Name)
		}
		for _, c := range f.Columns {
			if !slices.Contains(o.Columns, c) {
				o.Columns = append(o.Columns, c)
			}
		}
		if r.take, err = snap.newScanner(o); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// RowReader streams the rows of a ReadRows. It is not safe for concurrent
// use; Close releases what it holds.
type RowReader struct {
	scan  *Scanner
	take  *Scanner // what takes read: scan, or with a filter its columns too
	ids   *roaring64.Bitmap
	want  uint64 // ids asked for
	found uint64 // ids found live in the fragments passed
	frag  int    // next fragment to consider
	whole *Scanner
	locs  []RowLocation // located rows of the current fragment not yet read
	// Scanned and Taken count the fragments read each way (for tests and
	// profiles).
	Scanned, Taken int
}

var _ BatchReader = (*RowReader)(nil)

// Schema returns the schema of the batches.
func (r *RowReader) Schema() *arrow.Schema { return r.scan.schema }

// Next returns the next batch, or io.EOF after the last. The caller
// releases the batch.
func (r *RowReader) Next(ctx context.Context) (arrow.RecordBatch, error) {
	snap := r.scan.snap
	t, m := snap.table, snap.Manifest
	for {
		if err := snap.ctxErr(ctx, "read rows"); err != nil {
			return nil, err
		}
		if r.whole != nil {
			rec, err := r.whole.Next(ctx)
			if err == io.EOF {
				r.whole = nil
				continue
			}
			return rec, err
		}
		if len(r.locs) > 0 {
			n := min(len(r.locs), readTakeChunk)
			rec, err := t.takeFromFragment(ctx, m, r.take, r.locs[:n])
			if err != nil {
				return nil, err
			}
			r.locs = r.locs[n:]
			if f := r.scan.opts.Filter; f != nil {
				if rec, err = r.filterTaken(f, rec); err != nil {
					return nil, err
				}
				if rec == nil {
					continue
				}
			}
			return rec, nil
		}
		if r.found >= r.want || r.frag >= len(m.Fragments) {
			return nil, io.EOF
		}
		f := m.Fragments[r.frag]
		r.frag++
		if !m.StableRowIDs() {
			locs, err := t.locateByAddress(f, r.ids)
			if err != nil {
				return nil, err
			}
			r.found += uint64(len(locs))
			r.locs = locs
			r.Taken += min(len(locs), 1)
			continue
		}
		seq, err := t.rowIDSequence(m, f)
		if err != nil {
			return nil, err
		}
		if !seq.Overlaps(r.ids) {
			continue
		}
		if seq.Within(r.ids) {
			o := r.scan.opts
			o.Fragments = []uint64{f.ID}
			sc, err := snap.newScanner(o)
			if err != nil {
				return nil, err
			}
			r.found += f.LiveRows()
			r.whole = sc
			r.Scanned++
			continue
		}
		locs, err := t.locateInSequence(f, seq, r.ids)
		if err != nil {
			return nil, err
		}
		slices.SortFunc(locs, func(a, b RowLocation) int { return cmp.Compare(a.Offset, b.Offset) })
		r.found += uint64(len(locs))
		r.locs = locs
		r.Taken += min(len(locs), 1)
	}
}

// filterTaken applies f to taken rows (r.take's columns): the rows it
// selects, with r.scan's columns. It releases rec; nil when none is kept.
func (r *RowReader) filterTaken(f *ScanFilter, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	defer rec.Release()
	schema := rec.Schema()
	fields := make([]arrow.Field, len(f.Columns))
	cols := make([]arrow.Array, len(f.Columns))
	for i, name := range f.Columns {
		j := schema.FieldIndices(name)
		if len(j) == 0 {
			return nil, fmt.Errorf("read rows: filter column %q is not read", name)
		}
		fields[i], cols[i] = schema.Field(j[0]), rec.Column(j[0])
	}
	frec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
	sel, err := f.Select(frec)
	frec.Release()
	if err != nil {
		return nil, err
	}
	if len(sel) == 0 {
		return nil, nil
	}
	rows := make([]uint64, len(sel))
	for i, k := range sel {
		if k < 0 || int64(k) >= rec.NumRows() || (i > 0 && k <= sel[i-1]) {
			return nil, fmt.Errorf("read rows: filter selection index %d at %d is out of order or range (%d rows)", k, i, rec.NumRows())
		}
		rows[i] = uint64(k)
	}
	out := r.scan.schema
	kept := make([]arrow.Array, 0, out.NumFields())
	defer func() {
		for _, c := range kept {
			c.Release()
		}
	}()
	for _, fld := range out.Fields() {
		j := schema.FieldIndices(fld.Name)
		if len(j) == 0 {
			return nil, fmt.Errorf("read rows: column %q is not read", fld.Name)
		}
		a, err := gatherRows(rec.Column(j[0]), 0, rows, fld.Type, r.scan.opts.Mem)
		if err != nil {
			return nil, err
		}
		kept = append(kept, a)
	}
	return array.NewRecordBatch(out, kept, int64(len(rows))), nil
}

// Close releases what the reader holds; the remaining rows are not read.
func (r *RowReader) Close() error {
	if r.whole != nil {
		r.whole.Close()
		r.whole = nil
	}
	r.locs = nil
	r.frag = len(r.scan.snap.Fragments)
	return nil
}

// rowIDSequence decodes the row-id sequence of one fragment of a
// stable-row-id table, without its deletion file or version sequences.
func (t *Table) rowIDSequence(m *Manifest, f *Fragment) (*rowid.U64Sequence, error) {
	return t.rowIDSequenceFor(m, f, "read row ids of fragment")
}

// rowIDSequenceFor is rowIDSequence with op naming the caller's work in
// its errors.
func (t *Table) rowIDSequenceFor(m *Manifest, f *Fragment, op string) (*rowid.U64Sequence, error) {
	t.rids.lookups.Add(1)
	if seq := t.rids.get(f.pb); seq != nil && seq.Len() == f.PhysicalRows {
		return seq, nil
	}
	b, err := t.sequenceBytes(f.pb.GetInlineRowIds(), f.pb.GetExternalRowIds())
	if err != nil {
		return nil, t.wrap(m.Version, op, err)
	}
	if b == nil {
		return nil, t.errorf(m.Version, op, "%w: fragment %d of a stable-row-id table has no row id sequence", ErrCorrupt, f.ID)
	}
	t.rids.decodes.Add(1)
	seq, err := rowid.DecodeRowIDSequence(b)
	if err != nil {
		return nil, t.wrap(m.Version, op, wrapf(err, "fragment %d", f.ID))
	}
	if seq.Len() != f.PhysicalRows {
		return nil, t.errorf(m.Version, op, "%w: fragment %d has %d row ids for %d rows", ErrCorrupt, f.ID, seq.Len(), f.PhysicalRows)
	}
	if f.pb != nil {
		t.rids.put(f.pb, seq)
	}
	return seq, nil
}
