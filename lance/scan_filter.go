package lance

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ScanFilter selects rows before the rest of a scan's columns are read
// (late materialization): the scan decodes the filter's columns a page at
// a time, asks Select which rows to keep, and reads the other columns at
// those rows only (a take within the page: FSST strings are expanded and
// dictionary values resolved for the kept rows alone).
type ScanFilter struct {
	// Columns are the top-level columns Select reads; they need not be in
	// ScanOptions.Columns.
	Columns []string
	// Dictionaries lets a string or binary filter column whose page is
	// stored dictionary-encoded reach Select as an Arrow dictionary array
	// (int32 indices over the page's dictionary, values of the column's
	// type), so that a predicate can be evaluated once per dictionary
	// item. Without it, every column arrives with its table type.
	Dictionaries bool
	// Select returns the ascending, distinct indices of the rows of rec
	// to keep. rec holds Columns (in that order) for a run of live rows in
	// scan order; it is released after the call. Select is called from
	// the goroutine calling Next, one batch at a time per scanner.
	Select func(rec arrow.RecordBatch) ([]int, error)
}

// filterReader is the state of a filtered scan of one fragment: the
// filter columns' cursors (beside the output ones, which are read by row)
// and the batches already selected but not yet returned.
type filterReader struct {
	cols    []*columnCursor // the filter's columns
	dict    []bool          // per filter column: the current chunk is a dictionary array
	outFrom []int           // per output column: index into cols, or -1 (read by row)
	schema  *arrow.Schema   // of the batches given to Select
}

// openFilter prepares the filtered reading of fr.
func (s *Scanner) openFilter(fr *fragmentReader) error {
	f := s.opts.Filter
	fl := &filterReader{outFrom: make([]int, len(fr.cols))}
	byName := map[string]int{}
	var fields []arrow.Field
	for i, name := range f.Columns {
		sf, err := s.scanFieldOf(name)
		if err != nil {
			return err
		}
		cur := &columnCursor{field: sf}
		// The filter column is read from the file the output column of
		// the same name uses, or opened like one.
		for _, c := range fr.cols {
			if c.field.field == sf.field {
				cur.reader = c.reader
			}
		}
		if cur.reader == nil {
			rd, err := fr.openColumn(sf)
			if err != nil {
				return err
			}
			cur.reader = rd
		}
		byName[name] = i
		fl.cols = append(fl.cols, cur)
		fields = append(fields, arrow.Field{Name: name, Type: sf.typ, Nullable: true})
	}
	fl.dict = make([]bool, len(fl.cols))
	for i, c := range fr.cols {
		fl.outFrom[i] = -1
		if j, ok := byName[c.field.field.Name]; ok {
			fl.outFrom[i] = j
		}
	}
	fl.schema = arrow.NewSchema(fields, nil)
	fr.filter = fl
	return nil
}

// scanFieldOf resolves a top-level column of the scanned version.
func (s *Scanner) scanFieldOf(name string) (scanField, error) {
	m := s.snap.Manifest
	f := m.Schema.FieldByName(name)
	if f == nil {
		return scanField{}, s.snap.table.errorf(m.Version, "scan", "no column %q in the table (columns: %s)", name, m.Schema.ColumnList())
	}
	af, err := f.Arrow()
	if err != nil {
		return scanField{}, s.snap.table.wrap(m.Version, "scan", err)
	}
	return scanField{field: f, typ: af.Type}, nil
}

// filteredBatch reads the rows of [start, end of the filter columns'
// chunks) that the filter keeps, at most want of them (the first), and
// returns them (nil when none) with the next offset. The batch may hold
// more than maxRows rows: the caller slices it.
func (fr *fragmentReader) filteredBatch(ctx context.Context, schema *arrow.Schema, f *ScanFilter, start, want uint64, mem memory.Allocator) (arrow.RecordBatch, uint64, error) {
	fl := fr.filter
	end := fr.frag.PhysicalRows
	for i, c := range fl.cols {
		if c.chunk == nil || start < c.lo || start >= c.hi {
			if err := fl.load(ctx, i, fr.frag, start, f.Dictionaries, mem); err != nil {
				return nil, 0, fr.t.wrap(fr.frag.version, "scan", err)
			}
		}
		end = min(end, c.hi)
	}
	if len(fl.cols) == 0 {
		end = min(end, start+filterRangeRows)
	}
	keep, n := fr.keptRuns(start, end)
	if len(keep) == 0 {
		return nil, end, nil
	}
	// The live rows, as Select sees them.
	in := make([]arrow.Array, len(fl.cols))
	defer func() {
		for _, a := range in {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i, c := range fl.cols {
		a, err := sliceRuns(c.chunk, c.lo, keep, mem)
		if err != nil {
			return nil, 0, err
		}
		in[i] = a
	}
	schemaOf := fl.schema
	for i, a := range in {
		if !arrow.TypeEqual(a.DataType(), fl.schema.Field(i).Type) {
			fields := fl.schema.Fields()
			for k := range fields {
				fields[k].Type = in[k].DataType()
			}
			schemaOf = arrow.NewSchema(fields, nil)
			break
		}
	}
	frec := array.NewRecordBatch(schemaOf, in, int64(n))
	sel, err := f.Select(frec)
	frec.Release()
	if err != nil {
		return nil, 0, err
	}
	if len(sel) == 0 {
		return nil, end, nil
	}
	if uint64(len(sel)) > want { // a capped scan: the rows past the cap are never read
		sel = sel[:want]
	}
	// Physical offsets of the selected rows.
	phys := make([]uint64, len(sel))
	if len(keep) == 1 {
		for i, k := range sel {
			if k < 0 || uint64(k) >= n || (i > 0 && k <= sel[i-1]) {
				return nil, 0, fmt.Errorf("scan filter: selection index %d at %d is out of order or range (%d rows)", k, i, n)
			}
			phys[i] = keep[0][0] + uint64(k) // the run may start after deleted rows
		}
	} else {
		r, base := 0, uint64(0) // keep[r] holds live rows [base, base+len)
		for i, k := range sel {
			if k < 0 || uint64(k) >= n || (i > 0 && k <= sel[i-1]) {
				return nil, 0, fmt.Errorf("scan filter: selection index %d at %d is out of order or range (%d rows)", k, i, n)
			}
			for uint64(k) >= base+keep[r][1]-keep[r][0] {
				base += keep[r][1] - keep[r][0]
				r++
			}
			phys[i] = keep[r][0] + uint64(k) - base
		}
	}
	cols := make([]arrow.Array, 0, schema.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	// Most rows kept: decoding the range and gathering costs less than a
	// take, which decodes the same chunks and gathers row by row.
	dense := uint64(len(phys)) > (end-start)/2
	for i, c := range fr.cols {
		var a arrow.Array
		var err error
		if j := fl.outFrom[i]; j >= 0 {
			fc := fl.cols[j]
			a, err = gatherRows(fc.chunk, fc.lo, phys, c.field.typ, mem)
		} else if dense {
			a, err = c.readDense(ctx, start, end, phys, mem)
		} else {
			a, err = c.readRows(ctx, phys, mem)
		}
		if err != nil {
			return nil, 0, fr.t.wrap(fr.frag.version, "scan", err)
		}
		cols = append(cols, a)
	}
	if fr.meta > 0 {
		cols = append(cols, fr.metaColumnsAt(phys, mem)...)
	}
	return array.NewRecordBatch(schema, cols, int64(len(phys))), end, nil
}

// filterRangeRows bounds the rows of one filtered range when the filter
// reads no column (a constant predicate).
const filterRangeRows = 64 << 10

// load reads the chunk of filter column i holding row start.
func (fl *filterReader) load(ctx context.Context, i int, frag *Fragment, start uint64, dicts bool, mem memory.Allocator) error {
	c := fl.cols[i]
	fl.dict[i] = false
	if dicts && c.reader != nil {
		if c.chunk != nil {
			c.chunk.Release()
			c.chunk = nil
		}
		a, lo, hi, ok, err := c.reader.ReadFieldChunkDict(ctx, c.field.field.ID, c.field.typ, start, mem)
		if err != nil {
			return err
		}
		if ok {
			if lo != start || hi <= start || uint64(a.Len()) != hi-lo {
				a.Release()
				return fmt.Errorf("%w: field %q chunk [%d, %d) of %d rows does not cover row %d", ErrCorrupt, c.field.field.Name, lo, hi, a.Len(), start)
			}
			c.chunk, c.lo, c.hi = a, lo, hi
			fl.dict[i] = true
			return nil
		}
	}
	return c.load(ctx, frag, start, filterRangeRows, false, mem)
}

// readRows reads the column at the given physical offsets (ascending).
func (c *columnCursor) readRows(ctx context.Context, phys []uint64, mem memory.Allocator) (arrow.Array, error) {
	if c.reader == nil {
		return array.MakeArrayOfNull(mem, c.field.typ, len(phys)), nil
	}
	a, err := c.reader.ReadFieldRows(ctx, c.field.field.ID, c.field.typ, phys, mem)
	if err != nil {
		return nil, err
	}
	if a.Len() != len(phys) {
		a.Release()
		return nil, fmt.Errorf("%w: field %q read %d rows, want %d", ErrCorrupt, c.field.field.Name, a.Len(), len(phys))
	}
	return a, nil
}

// readDense reads the column's rows [start, end) and gathers those at phys.
func (c *columnCursor) readDense(ctx context.Context, start, end uint64, phys []uint64, mem memory.Allocator) (arrow.Array, error) {
	if c.reader == nil {
		return array.MakeArrayOfNull(mem, c.field.typ, len(phys)), nil
	}
	a, err := c.reader.ReadField(ctx, c.field.field.ID, c.field.typ, start, end-start, mem)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	if uint64(a.Len()) != end-start {
		return nil, fmt.Errorf("%w: field %q read %d rows, want %d", ErrCorrupt, c.field.field.Name, a.Len(), end-start)
	}
	if uint64(len(phys)) == end-start {
		a.Retain()
		return a, nil
	}
	return gatherRows(a, start, phys, c.field.typ, mem)
}

// metaColumnsAt builds the row metadata columns for the rows at the
// physical offsets phys (ascending).
func (fr *fragmentReader) metaColumnsAt(phys []uint64, mem memory.Allocator) []arrow.Array {
	bufs, vals := metaBuffers(fr.meta, len(phys), mem)
	if fr.rows.rowIDs != nil {
		fr.rows.rowIDs.Gather(phys, vals[0])
	}
	for w, off := range phys {
		fr.setMeta(vals, w, off)
	}
	return metaArrays(bufs, len(phys))
}

func (fl *filterReader) close() {
	for _, c := range fl.cols {
		if c.chunk != nil {
			c.chunk.Release()
			c.chunk = nil
		}
	}
}
