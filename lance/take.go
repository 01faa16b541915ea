package lance

import (
	"context"
	"io"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Take starts reading the live rows of the snapshot whose row ids are in
// ids, in scan order, one batch per fragment that holds any of them
// (opts.Columns, RowMeta and Mem apply; BatchSize and Limit do not). Only
// the fragments, data files and pages holding the rows are read, so the
// cost follows the number of ids, not the table. The rows are located
// first (row-id sequences and deletion files only), so Taker.Missing
// already knows the ids not live at the snapshot; batches are read one
// fragment at a time as Next is called, never all at once. An incremental
// refresh takes view rows with it; it reads the changed source rows with
// ReadRows, which scans the fragments asked for whole.
func (snap *Snapshot) Take(ctx context.Context, ids *roaring64.Bitmap, opts ScanOptions) (*Taker, error) {
	s, err := snap.newScanner(opts) // validates the projection and builds the schema
	if err != nil {
		return nil, err
	}
	locs, missing, err := snap.Locate(ctx, ids)
	if err != nil {
		return nil, err
	}
	return &Taker{scan: s, locs: locs, missing: missing}, nil
}

// Taker streams the rows of a Take, one batch per fragment. It is not safe
// for concurrent use.
type Taker struct {
	scan    *Scanner
	locs    []RowLocation // sorted in scan order; the unread tail
	missing *roaring64.Bitmap
}

// Schema returns the schema of the batches.
func (tk *Taker) Schema() *arrow.Schema { return tk.scan.schema }

// Missing returns the requested ids that are not live at the snapshot.
func (tk *Taker) Missing() *roaring64.Bitmap { return tk.missing }

// Next returns the rows of the next fragment holding any of the ids, or
// io.EOF after the last. The caller releases the batch.
func (tk *Taker) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if len(tk.locs) == 0 {
		return nil, io.EOF
	}
	snap := tk.scan.snap
	if err := snap.ctxErr(ctx, "take"); err != nil {
		return nil, err
	}
	j := 0
	for j < len(tk.locs) && tk.locs[j].Fragment == tk.locs[0].Fragment {
		j++
	}
	rec, err := snap.table.takeFromFragment(ctx, snap.Manifest, tk.scan, tk.locs[:j])
	if err != nil {
		return nil, err
	}
	tk.locs = tk.locs[j:]
	return rec, nil
}

// Close releases what the taker holds; the remaining rows are not read.
func (tk *Taker) Close() error {
	tk.locs = nil
	return nil
}

// TakeAll reads every batch of a Take into memory, for callers that need
// them together (tests, small id sets); a refresh should stream with Next.
func (snap *Snapshot) TakeAll(ctx context.Context, ids *roaring64.Bitmap, opts ScanOptions) (batches []arrow.RecordBatch, missing *roaring64.Bitmap, err error) {
	tk, err := snap.Take(ctx, ids, opts)
	if err != nil {
		return nil, nil, err
	}
	defer tk.Close()
	for {
		rec, err := tk.Next(ctx)
		if err == io.EOF {
			return batches, tk.Missing(), nil
		}
		if err != nil {
			for _, b := range batches {
				b.Release()
			}
			return nil, nil, err
		}
		batches = append(batches, rec)
	}
}

// takeFromFragment reads the located rows of one fragment (sorted by
// offset).
func (t *Table) takeFromFragment(ctx context.Context, m *Manifest, s *Scanner, locs []RowLocation) (arrow.RecordBatch, error) {
	f := locs[0].Fragment
	meta := len(s.opts.metaNames())
	fr, err := t.openFragment(m, f, s.fields, meta)
	if err != nil {
		return nil, err
	}
	defer fr.close()
	offsets := make([]uint64, len(locs))
	for i, l := range locs {
		offsets[i] = l.Offset
	}
	mem := s.opts.Mem
	cols := make([]arrow.Array, 0, s.schema.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, c := range fr.cols {
		var a arrow.Array
		if c.reader == nil {
			a = array.MakeArrayOfNull(mem, c.field.typ, len(offsets))
		} else if a, err = c.reader.ReadFieldRows(ctx, c.field.field.ID, c.field.typ, offsets, mem); err != nil {
			return nil, t.wrap(m.Version, "take", err)
		}
		cols = append(cols, a)
	}
	if meta > 0 {
		b := make([]*array.Uint64Builder, meta)
		for i := range b {
			b[i] = array.NewUint64Builder(mem)
			defer b[i].Release()
		}
		for _, l := range locs {
			b[0].Append(l.RowID)
			if meta > 1 {
				b[1].Append(RowAddr(f.ID, l.Offset))
			}
			if meta > 2 {
				b[2].Append(fr.rows.CreatedAt(l.Offset))
				b[3].Append(fr.rows.LastUpdatedAt(l.Offset))
			}
		}
		for i := range b {
			cols = append(cols, b[i].NewArray())
		}
	}
	return array.NewRecordBatch(s.schema, cols, int64(len(locs))), nil
}
