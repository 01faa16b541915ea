package datafile

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance/internal/format"
)

// WithTableSchema returns a reader of the same file that takes fields'
// nullability from the table's schema s (the manifest's, which LanceDB's
// alter_columns changes without rewriting files) instead of the file's
// own: in a legacy file an empty string or binary is null exactly when the
// table's field is nullable, as LanceDB reads it. Other files do not
// depend on it.
func (r *Reader) WithTableSchema(s *format.Schema) *Reader {
	if r.legacy == nil || s == nil {
		return r
	}
	c := *r
	c.table = s
	return &c
}

// legacyNullable is whether field f of a legacy file is nullable: the
// table's say when it has the field, else the file's.
func (r *Reader) legacyNullable(f *format.Field) bool {
	if r.table != nil {
		if tf := r.table.FieldByID(f.ID); tf != nil {
			return tf.Nullable
		}
	}
	return f.Nullable
}

// legacyTop returns the top-level field fieldID of a legacy file, nil when
// the file does not hold it (a column added later: it reads as nulls).
func (r *Reader) legacyTop(fieldID int32) (*format.Field, error) {
	f := r.schema.FieldByID(fieldID)
	if f == nil {
		return nil, nil
	}
	if f.ParentID >= 0 {
		return nil, fmt.Errorf("read %s field %d: not a top-level field", r.name, fieldID)
	}
	return f, nil
}

// legacyRead decodes rows [lo, hi) of top-level field f, batch by batch.
func (r *Reader) legacyRead(ctx context.Context, f *format.Field, dt arrow.DataType, lo, hi uint64, mem memory.Allocator) (arrow.Array, error) {
	lf := r.legacy
	var parts []arrow.Array
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for x := lo; x < hi; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b := lf.batchOf(x)
		end := min(hi, lf.batches[b+1])
		d, err := r.legacyDecode(f, dt, b, x-lf.batches[b], end-lf.batches[b], mem)
		if err != nil {
			return nil, decodeErr(r.name, fmt.Errorf("read %s field %d (%q) batch %d: %w", r.name, f.ID, f.Name, b, err))
		}
		parts = append(parts, array.MakeFromData(d))
		d.Release()
		x = end
	}
	switch len(parts) {
	case 0:
		return array.MakeArrayOfNull(mem, dt, 0), nil
	case 1:
		parts[0].Retain()
		return parts[0], nil
	}
	out, err := array.Concatenate(parts, mem)
	if err != nil {
		return nil, decodeErr(r.name, fmt.Errorf("read %s field %d: %w", r.name, f.ID, err))
	}
	return out, nil
}

// legacyChunk is ReadFieldChunk (and ReadFieldRange, narrow) for legacy
// files: a chunk ends at the end of the batch holding start.
func (r *Reader) legacyChunk(ctx context.Context, fieldID int32, dt arrow.DataType, start, maxRows uint64, narrow bool, mem memory.Allocator) (arrow.Array, uint64, uint64, error) {
	f, err := r.legacyTop(fieldID)
	if err != nil {
		return nil, 0, 0, err
	}
	if f == nil {
		n := min(max(maxRows, 1), r.numRows-start)
		return array.MakeArrayOfNull(mem, dt, int(n)), start, start + n, nil
	}
	end := r.legacy.batches[r.legacy.batchOf(start)+1]
	if narrow {
		end = min(end, start+max(maxRows, 1))
	}
	a, err := r.legacyRead(ctx, f, dt, start, end, mem)
	if err != nil {
		return nil, 0, 0, err
	}
	return a, start, end, nil
}

// legacyRows is ReadFieldRows for legacy files: each batch holding any of
// the rows decodes the span from its first to its last row once, and the
// rows are sliced out of it.
func (r *Reader) legacyRows(ctx context.Context, fieldID int32, dt arrow.DataType, rows []uint64, mem memory.Allocator) (arrow.Array, error) {
	f, err := r.legacyTop(fieldID)
	if err != nil {
		return nil, err
	}
	if f == nil {
		return array.MakeArrayOfNull(mem, dt, len(rows)), nil
	}
	if len(rows) == 0 {
		return array.MakeArrayOfNull(mem, dt, 0), nil
	}
	return r.takeByUnit(rows, fieldID, mem,
		func(row uint64) (uint64, error) { return r.legacy.batches[r.legacy.batchOf(row)+1], nil },
		func(lo, hi uint64) (arrow.Array, uint64, error) {
			arr, err := r.legacyRead(ctx, f, dt, lo, hi, mem)
			return arr, lo, err
		})
}

// legacyDecode decodes items [lo, hi) of field f's page in batch b as dt.
func (r *Reader) legacyDecode(f *format.Field, dt arrow.DataType, b int, lo, hi uint64, mem memory.Allocator) (arrow.ArrayData, error) {
	if lo > hi || hi-lo > r.limits.maxItems {
		return nil, fmt.Errorf("items %d..%d of field %d are more than a page may hold (%d)", lo, hi, f.ID, r.limits.maxItems)
	}
	switch t := dt.(type) {
	case *arrow.StructType:
		return r.legacyStruct(f, t, b, lo, hi, mem)
	case *arrow.ListType, *arrow.LargeListType:
		return r.legacyList(f, dt, b, lo, hi, mem)
	}
	if f.IsStruct() || f.IsList() {
		return nil, fmt.Errorf("field %d (%q) is %s in the file but read as %v", f.ID, f.Name, f.LogicalType, dt)
	}
	pg, err := r.legacy.page(f.ID, b)
	if err != nil {
		return nil, err
	}
	switch t := dt.(type) {
	case *arrow.NullType:
		if hi > pg.size {
			return nil, fmt.Errorf("items %d..%d are past the page's %d", lo, hi, pg.size)
		}
		return newData(dt, int(hi-lo), []*memory.Buffer{nil}, nil, int(hi-lo), 0), nil
	case *arrow.StringType, *arrow.LargeStringType, *arrow.BinaryType, *arrow.LargeBinaryType:
		return r.legacyBinary(pg, dt, r.legacyNullable(f), lo, hi, mem)
	case *arrow.DictionaryType:
		return r.legacyDict(f, t, pg, lo, hi, mem)
	}
	return r.legacyFixed(pg, dt, lo, hi)
}

// legacyFixed decodes items [lo, hi) of a plain page of fixed-width values
// (a fixed-size list's items are its values, row after row).
func (r *Reader) legacyFixed(pg span, dt arrow.DataType, lo, hi uint64) (arrow.ArrayData, error) {
	if lo > hi || hi > pg.size {
		return nil, fmt.Errorf("items %d..%d are past the page's %d", lo, hi, pg.size)
	}
	room := uint64(r.size) - min(pg.pos, uint64(r.size)) // bytes after the page's start
	n := int(hi - lo)
	switch t := dt.(type) {
	case *arrow.FixedSizeListType:
		k := uint64(t.Len())
		if k == 0 {
			child, err := r.legacyFixed(span{pg.pos, 0}, t.Elem(), 0, 0)
			if err != nil {
				return nil, err
			}
			defer child.Release()
			return newData(dt, n, []*memory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0), nil
		}
		if hi > math.MaxUint64/k {
			return nil, fmt.Errorf("%d fixed-size lists of %d items overflow", hi, k)
		}
		child, err := r.legacyFixed(span{pg.pos, min(pg.size, math.MaxUint64/k) * k}, t.Elem(), lo*k, hi*k)
		if err != nil {
			return nil, err
		}
		defer child.Release()
		return newData(dt, n, []*memory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0), nil
	case *arrow.BooleanType:
		if hi > room*8 {
			return nil, fmt.Errorf("bits %d..%d run past the file", lo, hi)
		}
		src := make([]byte, (hi+7)/8-lo/8)
		if err := r.readAt(src, pg.pos+lo/8); err != nil {
			return nil, err
		}
		dst := make([]byte, (n+7)/8)
		bitutil.CopyBitmap(src, int(lo%8), n, dst, 0)
		return newData(dt, n, []*memory.Buffer{nil, bufFrom(dst, nil)}, nil, 0, 0), nil
	}
	w, err := legacyWidth(dt)
	if err != nil {
		return nil, err
	}
	if hi > room/w {
		return nil, fmt.Errorf("items %d..%d of %d bytes run past the file", lo, hi, w)
	}
	buf := make([]byte, uint64(n)*w)
	if err := r.readAt(buf, pg.pos+lo*w); err != nil {
		return nil, err
	}
	return newData(dt, n, []*memory.Buffer{nil, bufFrom(buf, nil)}, nil, 0, 0), nil
}

// legacyWidth is the byte width of a plain fixed-width type.
func legacyWidth(dt arrow.DataType) (uint64, error) {
	if t, ok := dt.(*arrow.FixedSizeBinaryType); ok {
		if t.ByteWidth <= 0 {
			return 0, fmt.Errorf("fixed-size binary of width %d", t.ByteWidth)
		}
		return uint64(t.ByteWidth), nil
	}
	if t, ok := dt.(arrow.FixedWidthDataType); ok && t.BitWidth() >= 8 && t.BitWidth()%8 == 0 && len(dt.Layout().Buffers) == 2 {
		return uint64(t.BitWidth() / 8), nil
	}
	return 0, legacyUnsupportedErr("%v fields are not supported", dt)
}

// readAt fills b from the file at pos; a short read means the file is
// shorter than its metadata says.
func (r *Reader) readAt(b []byte, pos uint64) error {
	if pos > uint64(r.size) || uint64(len(b)) > uint64(r.size)-pos {
		return fmt.Errorf("%d bytes at %d run past the file's %d", len(b), pos, r.size)
	}
	if _, err := r.r.ReadAt(b, int64(pos)); err != nil {
		return storageErr(err)
	}
	return nil
}

// legacyPositions reads entries [lo, hi] (inclusive) of a plain array of
// width-byte unsigned positions at pos, checking they never decrease.
func (r *Reader) legacyPositions(pos, lo, hi, width uint64) ([]uint64, error) {
	room := uint64(r.size) - min(pos, uint64(r.size))
	if hi >= room/width {
		return nil, fmt.Errorf("positions %d..%d run past the file", lo, hi)
	}
	b := make([]byte, (hi-lo+1)*width)
	if err := r.readAt(b, pos+lo*width); err != nil {
		return nil, err
	}
	out := make([]uint64, hi-lo+1)
	for i := range out {
		var v int64
		if width == 4 {
			v = int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
		} else {
			v = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
		if v < 0 || (i > 0 && uint64(v) < out[i-1]) {
			return nil, fmt.Errorf("position %d (%d) is negative or decreasing", lo+uint64(i), v)
		}
		out[i] = uint64(v)
	}
	return out, nil
}

// legacyBinary decodes items [lo, hi) of a string or binary page: its
// length+1 absolute positions start at the page's position and delimit
// the values. An empty value of a nullable field is null, as LanceDB
// reads it.
func (r *Reader) legacyBinary(pg span, dt arrow.DataType, nullable bool, lo, hi uint64, mem memory.Allocator) (arrow.ArrayData, error) {
	if lo > hi || hi > pg.size {
		return nil, fmt.Errorf("items %d..%d are past the page's %d", lo, hi, pg.size)
	}
	p, err := r.legacyPositions(pg.pos, lo, hi, 8)
	if err != nil {
		return nil, err
	}
	n := int(hi - lo)
	total := p[n] - p[0]
	if p[n] > uint64(r.size) {
		return nil, fmt.Errorf("values end at %d, past the file's %d bytes", p[n], r.size)
	}
	data := make([]byte, total)
	if err := r.readAt(data, p[0]); err != nil {
		return nil, err
	}
	var offs []byte
	switch dt.ID() {
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		offs = make([]byte, 8*(n+1))
		for i, v := range p {
			binary.LittleEndian.PutUint64(offs[8*i:], v-p[0])
		}
	default:
		if total > math.MaxInt32 {
			return nil, unsupportedErr("%d bytes of values in one %v array", total, dt)
		}
		offs = make([]byte, 4*(n+1))
		for i, v := range p {
			binary.LittleEndian.PutUint32(offs[4*i:], uint32(v-p[0]))
		}
	}
	var valid *memory.Buffer
	nulls := 0
	if nullable {
		flags := make([]bool, n)
		for i := range flags {
			flags[i] = p[i+1] != p[i]
			if !flags[i] {
				nulls++
			}
		}
		valid = bitmap(flags, nulls, mem)
	}
	return newData(dt, n, []*memory.Buffer{valid, bufFrom(offs, nil), bufFrom(data, nil)}, nil, nulls, 0), nil
}

// legacyStruct decodes items [lo, hi) of a struct: its members, matched by
// name (a member the file lacks reads as nulls); structs have no validity.
func (r *Reader) legacyStruct(f *format.Field, t *arrow.StructType, b int, lo, hi uint64, mem memory.Allocator) (arrow.ArrayData, error) {
	if !f.IsStruct() {
		return nil, fmt.Errorf("field %d (%q) is %s in the file but read as %v", f.ID, f.Name, f.LogicalType, t)
	}
	children := make([]arrow.ArrayData, 0, t.NumFields())
	defer func() {
		for _, c := range children {
			c.Release()
		}
	}()
	for _, cf := range t.Fields() {
		var fc *format.Field
		for _, c := range f.Children {
			if c.Name == cf.Name {
				fc = c
				break
			}
		}
		if fc == nil {
			a := array.MakeArrayOfNull(mem, cf.Type, int(hi-lo))
			d := a.Data()
			d.Retain()
			a.Release()
			children = append(children, d)
			continue
		}
		d, err := r.legacyDecode(fc, cf.Type, b, lo, hi, mem)
		if err != nil {
			return nil, err
		}
		children = append(children, d)
	}
	return newData(t, int(hi-lo), []*memory.Buffer{nil}, children, 0, 0), nil
}

// legacyList decodes items [lo, hi) of a list: its page holds the offsets
// (int32, int64 for large lists) into the item field's page of the batch,
// one more than the items.
func (r *Reader) legacyList(f *format.Field, dt arrow.DataType, b int, lo, hi uint64, mem memory.Allocator) (arrow.ArrayData, error) {
	large := dt.ID() == arrow.LARGE_LIST
	if !f.IsList() || strings.HasPrefix(f.LogicalType, "large_") != large || len(f.Children) != 1 {
		return nil, fmt.Errorf("field %d (%q) is %s in the file but read as %v", f.ID, f.Name, f.LogicalType, dt)
	}
	pg, err := r.legacy.page(f.ID, b)
	if err != nil {
		return nil, err
	}
	if lo > hi || hi >= pg.size {
		return nil, fmt.Errorf("lists %d..%d are past the page's %d offsets", lo, hi, pg.size)
	}
	width := uint64(4)
	if large {
		width = 8
	}
	p, err := r.legacyPositions(pg.pos, lo, hi, width)
	if err != nil {
		return nil, err
	}
	n := int(hi - lo)
	child, err := r.legacyDecode(f.Children[0], dt.(arrow.ListLikeType).Elem(), b, p[0], p[n], mem)
	if err != nil {
		return nil, err
	}
	defer child.Release()
	offs := make([]byte, int(width)*(n+1))
	for i, v := range p {
		if large {
			binary.LittleEndian.PutUint64(offs[8*i:], v-p[0])
		} else {
			binary.LittleEndian.PutUint32(offs[4*i:], uint32(v-p[0]))
		}
	}
	return newData(dt, n, []*memory.Buffer{nil, bufFrom(offs, nil)}, []arrow.ArrayData{child}, 0, 0), nil
}

// legacyDict decodes items [lo, hi) of a dictionary field: the page holds
// the keys, the file's own schema locates the values (written in the file
// when it was finished).
func (r *Reader) legacyDict(f *format.Field, t *arrow.DictionaryType, pg span, lo, hi uint64, mem memory.Allocator) (arrow.ArrayData, error) {
	pd := r.legacy.fields[f.ID].GetDictionary()
	if pd == nil || pd.GetOffset() < 0 || pd.GetLength() < 0 {
		return nil, fmt.Errorf("dictionary field %d (%q) has no dictionary in the file's schema", f.ID, f.Name)
	}
	keys, err := r.legacyFixed(pg, t.IndexType, lo, hi)
	if err != nil {
		return nil, err
	}
	defer keys.Release()
	dictPage := span{uint64(pd.GetOffset()), uint64(pd.GetLength())}
	var values arrow.ArrayData
	switch t.ValueType.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		values, err = r.legacyBinary(dictPage, t.ValueType, false, 0, dictPage.size, mem)
	default:
		values, err = r.legacyFixed(dictPage, t.ValueType, 0, dictPage.size)
	}
	if err != nil {
		return nil, fmt.Errorf("dictionary: %w", err)
	}
	defer values.Release()
	w, err := legacyWidth(t.IndexType)
	if err != nil {
		return nil, err
	}
	kb := keys.Buffers()[1].Bytes()
	signed := arrow.IsSignedInteger(t.IndexType.ID())
	for i := 0; i < keys.Len(); i++ {
		var k uint64
		switch w {
		case 1:
			k = uint64(kb[i])
		case 2:
			k = uint64(binary.LittleEndian.Uint16(kb[2*i:]))
		case 4:
			k = uint64(binary.LittleEndian.Uint32(kb[4*i:]))
		default:
			k = binary.LittleEndian.Uint64(kb[8*i:])
		}
		if signed && k>>(8*w-1)&1 == 1 || k >= dictPage.size {
			return nil, fmt.Errorf("dictionary key at item %d is outside the %d values", lo+uint64(i), dictPage.size)
		}
	}
	kb2 := keys.Buffers()[1]
	kb2.Retain()
	d := array.NewDataWithDictionary(t, keys.Len(), []*memory.Buffer{nil, kb2}, 0, 0, values.(*array.Data))
	kb2.Release()
	return d, nil
}
