package lance

import (
	"context"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Take reads the live rows of version m whose row ids are in ids, in scan
// order, one batch per fragment that holds any of them (opts.Columns,
// RowMeta and Mem apply; BatchSize and Limit do not). Only the fragments,
// data files and pages holding the rows are read, so the cost follows the
// number of ids, not the table. Ids not live at m are returned in missing.
// This is what an incremental refresh calls with a change set.
func (t *Table) Take(ctx context.Context, m *Manifest, ids *roaring64.Bitmap, opts ScanOptions) (batches []arrow.RecordBatch, missing *roaring64.Bitmap, err error) {
	s, err := t.Scan(m, opts) // validates the projection and builds the schema
	if err != nil {
		return nil, nil, err
	}
	defer s.Close()
	locs, missing, err := t.Locate(m, ids)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			for _, b := range batches {
				b.Release()
			}
			batches = nil
		}
	}()
	for i := 0; i < len(locs); {
		j := i
		for j < len(locs) && locs[j].Fragment == locs[i].Fragment {
			j++
		}
		rec, err := t.takeFromFragment(ctx, m, s, locs[i:j])
		if err != nil {
			return batches, nil, err
		}
		batches = append(batches, rec)
		i = j
	}
	return batches, missing, nil
}

// takeFromFragment reads the located rows of one fragment (sorted by
// offset).
func (t *Table) takeFromFragment(ctx context.Context, m *Manifest, s *Scanner, locs []RowLocation) (arrow.RecordBatch, error) {
	f := locs[0].Fragment
	fr, err := t.openFragment(m, f, s.fields, s.opts.RowMeta)
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
	if s.opts.RowMeta {
		b := [4]*array.Uint64Builder{}
		for i := range b {
			b[i] = array.NewUint64Builder(mem)
			defer b[i].Release()
		}
		for _, l := range locs {
			b[0].Append(l.RowID)
			b[1].Append(RowAddr(f.ID, l.Offset))
			b[2].Append(versionAt(fr.rows.CreatedAt, l.Offset))
			b[3].Append(versionAt(fr.rows.LastUpdatedAt, l.Offset))
		}
		for i := range b {
			cols = append(cols, b[i].NewArray())
		}
	}
	return array.NewRecordBatch(s.schema, cols, int64(len(locs))), nil
}

func versionAt(vs *VersionSequence, off uint64) uint64 {
	if vs == nil {
		return defaultRowVersion
	}
	return vs.At(off)
}
