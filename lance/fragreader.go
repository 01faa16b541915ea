package lance

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance/datafile"
	"github.com/mvd-project/mvd/lance/internal/rowid"
	"github.com/mvd-project/mvd/vfs"
)

// fragmentReader reads the projected fields of one fragment.
type fragmentReader struct {
	t       *Table
	frag    *Fragment
	rows    *FragmentRows
	files   []vfs.File
	byFile  map[int]*datafile.Reader // by index into frag.Files
	cols    []*columnCursor
	filter  *filterReader // a filtered scan's state (ScanOptions.Filter)
	meta    int           // row metadata columns: 0, 1 (_rowid), 2 (+ _rowaddr) or 4
	narrow  bool          // read only each batch's rows (ScanOptions.Narrow)
	created *rowid.Cursor
	updated *rowid.Cursor
	// mversion is the scanned version, for errors.
	mversion uint64
	// schema is the scanned version's table schema (legacy files take
	// nullability from it).
	schema *Schema
}

// columnCursor holds the decoded chunk of one field that the scan is in.
type columnCursor struct {
	field  scanField
	reader *datafile.Reader // nil: the field is in no data file (all null)
	chunk  arrow.Array
	lo, hi uint64
}

// metaNames lists the row metadata columns the options ask for.
func (o ScanOptions) metaNames() []string {
	switch {
	case o.RowMeta && o.NoRowVersions:
		return []string{ColRowID, ColRowAddr}
	case o.RowMeta:
		return []string{ColRowID, ColRowAddr, ColCreatedAt, ColLastUpdatedAt}
	case o.RowID:
		return []string{ColRowID}
	}
	return nil
}

// openFragment opens the data files of f holding fields; meta is the
// number of row metadata columns a batch gets (0, 1: _rowid, 2: _rowid
// and _rowaddr, or 4).
func (t *Table) openFragment(m *Manifest, f *Fragment, fields []scanField, meta int) (_ *fragmentReader, err error) {
	fr := &fragmentReader{t: t, frag: f, meta: meta, mversion: m.Version, schema: m.Schema}
	defer func() {
		if err != nil {
			fr.close()
		}
	}()
	if fr.rows, err = t.fragmentRows(m, f); err != nil {
		return nil, err
	}
	fr.created, fr.updated = rowid.NewCursor(fr.rows.createdAt), rowid.NewCursor(fr.rows.lastUpdatedAt)
	fr.byFile = map[int]*datafile.Reader{}
	for _, sf := range fields {
		rd, err := fr.openColumn(sf)
		if err != nil {
			return nil, err
		}
		fr.cols = append(fr.cols, &columnCursor{field: sf, reader: rd})
	}
	return fr, nil
}

// openColumn returns the reader of the data file of fr holding sf, opened
// once per file; nil when no data file holds it (a column added later).
func (fr *fragmentReader) openColumn(sf scanField) (*datafile.Reader, error) {
	t, f, version := fr.t, fr.frag, fr.mversion
	idx, err := fileOfField(f, sf.field)
	if err != nil {
		return nil, t.wrap(version, "scan", err)
	}
	if idx < 0 {
		return nil, nil
	}
	if rd := fr.byFile[idx]; rd != nil {
		return rd, nil
	}
	df := f.Files[idx]
	name := t.path(dataDir, df.Path)
	file, err := t.openDataFile(name, int64(df.SizeBytes))
	if err != nil {
		return nil, t.wrap(version, "open data file "+df.Path, err)
	}
	fr.files = append(fr.files, file)
	rd, err := datafile.Open(file, file.Size(), name)
	if err != nil {
		return nil, t.wrap(version, "scan", err)
	}
	if rd.NumRows() != f.PhysicalRows {
		return nil, t.errorf(version, "scan", "%w: data file %s has %d rows, fragment %d has %d", ErrCorrupt, df.Path, rd.NumRows(), f.ID, f.PhysicalRows)
	}
	rd = rd.WithTableSchema(fr.schema)
	fr.byFile[idx] = rd
	return rd, nil
}

// smallDataFile is the size up to which a data file on an object store is
// read whole, in one request, when it is opened: the footer, the metadata
// and the pages a read needs would each be a request of their own (six
// for the file of a small append), and a file this small is mostly the
// metadata every read needs anyway. Lance reads an object's last 64 KiB
// first for the same reason.
const smallDataFile = 64 << 10

// openDataFile opens a data file of size bytes (0: not recorded). The
// size the manifest records spares an object store's HEAD, and a small
// file there is read whole (smallDataFile).
func (t *Table) openDataFile(name string, size int64) (vfs.File, error) {
	if _, whole := t.objs.(vfs.WholeReader); whole && size > 0 && size <= smallDataFile {
		data, err := vfs.ReadObject(t.objs, name)
		if err != nil {
			return nil, err
		}
		return vfs.NewBytesFile(data), nil
	}
	return vfs.OpenSized(t.objs, name, size)
}

// fileOfField returns the index of the data file holding field f (or one
// of its descendants, since 2.1+ files list leaf ids only), or -1.
func fileOfField(frag *Fragment, f *Field) (int, error) {
	ids := map[int32]bool{}
	var walk func(*Field)
	walk = func(x *Field) {
		ids[x.ID] = true
		for _, c := range x.Children {
			walk(c)
		}
	}
	walk(f)
	found := -1
	for i, df := range frag.Files {
		for _, id := range df.Fields {
			if id >= 0 && ids[id] {
				if found >= 0 && found != i {
					return 0, corruptf("field %q of fragment %d is in two data files (%s, %s)", f.Name, frag.ID, frag.Files[found].Path, df.Path)
				}
				found = i
			}
		}
	}
	return found, nil
}

// batch reads the live rows of [start, start+max) — shortened to the end
// of every field's current chunk — and returns them with the next offset.
// It returns a nil batch when every row of the range is deleted.
func (fr *fragmentReader) batch(ctx context.Context, schema *arrow.Schema, start, maxRows uint64, mem memory.Allocator) (arrow.RecordBatch, uint64, error) {
	end := min(start+maxRows, fr.frag.PhysicalRows)
	for _, c := range fr.cols {
		if c.chunk == nil || start < c.lo || start >= c.hi {
			if err := c.load(ctx, fr.frag, start, maxRows, fr.narrow, mem); err != nil {
				return nil, 0, fr.t.wrap(fr.frag.version, "scan", err)
			}
		}
		end = min(end, c.hi)
	}
	keep, n := fr.keptRuns(start, end)
	if len(keep) == 0 {
		return nil, end, nil
	}
	cols := make([]arrow.Array, 0, schema.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, c := range fr.cols {
		a, err := sliceRuns(c.chunk, c.lo, keep, mem)
		if err != nil {
			return nil, 0, err
		}
		cols = append(cols, a)
	}
	if fr.meta > 0 {
		cols = append(cols, fr.metaColumns(keep, n, mem)...)
	}
	return array.NewRecordBatch(schema, cols, int64(n)), end, nil
}

// keptRuns returns the runs [lo, hi) of offsets in [start, end) that are
// not deleted, and how many offsets they hold.
func (fr *fragmentReader) keptRuns(start, end uint64) ([][2]uint64, uint64) {
	del := fr.rows.Deleted
	if del.IsEmpty() || del.Maximum() < uint32(start) || del.Minimum() >= uint32(end) {
		return [][2]uint64{{start, end}}, end - start
	}
	var runs [][2]uint64
	var n uint64
	lo := start
	it := del.Iterator()
	it.AdvanceIfNeeded(uint32(start))
	for it.HasNext() {
		d := uint64(it.Next())
		if d >= end {
			break
		}
		if d > lo {
			runs = append(runs, [2]uint64{lo, d})
			n += d - lo
		}
		lo = d + 1
	}
	if lo < end {
		runs = append(runs, [2]uint64{lo, end})
		n += end - lo
	}
	return runs, n
}

func (c *columnCursor) load(ctx context.Context, frag *Fragment, start, maxRows uint64, narrow bool, mem memory.Allocator) error {
	if c.chunk != nil {
		c.chunk.Release()
		c.chunk = nil
	}
	if c.reader == nil {
		// A column added after this fragment was written: all null.
		n := min(maxRows, frag.PhysicalRows-start)
		c.chunk, c.lo, c.hi = array.MakeArrayOfNull(mem, c.field.typ, int(n)), start, start+n
		return nil
	}
	read := c.reader.ReadFieldChunk
	if narrow {
		read = c.reader.ReadFieldRange
	}
	a, lo, hi, err := read(ctx, c.field.field.ID, c.field.typ, start, maxRows, mem)
	if err != nil {
		return err
	}
	if lo > start || hi <= start || uint64(a.Len()) != hi-lo {
		a.Release()
		return fmt.Errorf("%w: field %q chunk [%d, %d) of %d rows does not cover row %d", ErrCorrupt, c.field.field.Name, lo, hi, a.Len(), start)
	}
	c.chunk, c.lo, c.hi = a, lo, hi
	return nil
}

// sliceRuns returns the rows of the runs, taken from chunk whose first row
// is offset base. A single run is a zero-copy slice.
func sliceRuns(chunk arrow.Array, base uint64, runs [][2]uint64, mem memory.Allocator) (arrow.Array, error) {
	if len(runs) == 1 {
		return array.NewSlice(chunk, int64(runs[0][0]-base), int64(runs[0][1]-base)), nil
	}
	parts := make([]arrow.Array, len(runs))
	for i, r := range runs {
		parts[i] = array.NewSlice(chunk, int64(r[0]-base), int64(r[1]-base))
	}
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	return array.Concatenate(parts, mem)
}

// metaColumns builds the row metadata columns (fr.meta of them: _rowid,
// _rowaddr, the two row versions) for the kept rows.
func (fr *fragmentReader) metaColumns(keep [][2]uint64, n uint64, mem memory.Allocator) []arrow.Array {
	k := fr.meta
	bufs, vals := metaBuffers(k, int(n), mem)
	w := 0
	for _, r := range keep {
		if fr.rows.rowIDs != nil {
			ids := vals[0][w:]
			j := 0
			fr.rows.rowIDs.Each(r[0], r[1], func(id uint64) { ids[j] = id; j++ })
			if k == 1 {
				w += j
				continue
			}
		}
		for off := r[0]; off < r[1]; off++ {
			fr.setMeta(vals, w, off)
			w++
		}
	}
	return metaArrays(bufs, int(n))
}

// setMeta writes row off's metadata at position w of vals, but for a
// stable _rowid, which the caller takes from the row-id sequence.
func (fr *fragmentReader) setMeta(vals [][]uint64, w int, off uint64) {
	addr := RowAddr(fr.frag.ID, off)
	if fr.rows.rowIDs == nil {
		vals[0][w] = addr
	}
	if fr.meta >= 2 {
		vals[1][w] = addr
	}
	if fr.meta == 4 {
		vals[2][w] = fr.created.At(off)
		vals[3][w] = fr.updated.At(off)
	}
}

// metaBuffers allocates k uint64 columns of n values.
func metaBuffers(k, n int, mem memory.Allocator) ([]*memory.Buffer, [][]uint64) {
	bufs := make([]*memory.Buffer, k)
	vals := make([][]uint64, k)
	for i := range bufs {
		bufs[i] = memory.NewResizableBuffer(mem)
		bufs[i].Resize(n * 8)
		vals[i] = arrow.Uint64Traits.CastFromBytes(bufs[i].Bytes())
	}
	return bufs, vals
}

// metaArrays turns metaBuffers' buffers into arrays, handing them over.
func metaArrays(bufs []*memory.Buffer, n int) []arrow.Array {
	out := make([]arrow.Array, len(bufs))
	for i, b := range bufs {
		d := array.NewData(arrow.PrimitiveTypes.Uint64, n, []*memory.Buffer{nil, b}, nil, 0, 0)
		out[i] = array.MakeFromData(d)
		d.Release()
		b.Release()
	}
	return out
}

func (fr *fragmentReader) close() {
	if fr.filter != nil {
		fr.filter.close()
	}
	for _, c := range fr.cols {
		if c.chunk != nil {
			c.chunk.Release()
			c.chunk = nil
		}
	}
	for _, f := range fr.files {
		f.Close()
	}
	fr.files = nil
}
