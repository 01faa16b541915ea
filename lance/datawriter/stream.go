package datawriter

import (
	"fmt"
	"path"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance/internal/format"
	"github.com/mvd-project/mvd/vfs"
)

// streamFile writes one 2.1+ data file as rows arrive: each top-level
// field gathers its rows until a page is due (maxPageRows rows or
// targetPageBytes bytes) and then encodes and writes it, so the file's
// rows are never all in memory (pages of different columns interleave in
// the file, as in LanceDB's own files). It is not safe for concurrent use.
type streamFile struct {
	fsys   vfs.FS
	dir    string
	df     format.DataFile
	schema *format.Schema
	layout fileLayout
	file   vfs.WritableFile
	bw     *growWriter
	c      *container
	fields []*pendingField
	rows   int64
	// pageBytes, if > 0, replaces targetPageBytes (a refresh's memory
	// budget: FragmentWriter.PageBytes).
	pageBytes int64
}

// pendingField is one field's rows not yet encoded and its pages so far.
type pendingField struct {
	want  arrow.DataType
	parts []arrow.Array
	rows  int
	bytes int64
	pages fieldPages
}

// dataFileBuffer is the largest write buffer of a data file (growWriter):
// page buffers larger than it go (mostly) to the file directly, so it
// gathers the small writes (padding, level and offset buffers, metadata). 1 MiB cost a refresh's
// 11k-row file more in zeroing the buffer than it saved in write calls.
const dataFileBuffer = 256 << 10

// newStreamFile creates a new data file under dir for schema.
func newStreamFile(fsys vfs.FS, dir string, schema *format.Schema, f fileLayout) (*streamFile, error) {
	s := &streamFile{fsys: fsys, dir: dir, schema: schema, layout: f}
	s.df = format.DataFile{Path: newFileName(), Major: uint32(f.major), Minor: uint32(f.minor)}
	for _, field := range schema.Fields {
		want, err := field.ArrowType()
		if err != nil {
			return nil, err
		}
		s.fields = append(s.fields, &pendingField{want: want, pages: fieldPages{field: field}})
	}
	full := path.Join(dir, s.df.Path)
	w, err := vfs.CreateFresh(fsys, full) // a random name: no HEAD first on S3
	if err != nil {
		return nil, fmt.Errorf("datawriter: create %s: %w", full, err)
	}
	s.file = w
	s.bw = newGrowWriter(w, dataFileBuffer)
	s.c = &container{w: s.bw, major: f.major, minor: f.minor}
	return s, nil
}

// add appends rec's rows, writing the pages that became due.
func (s *streamFile) add(rec arrow.RecordBatch) error {
	if int(rec.NumCols()) != len(s.fields) {
		return mismatchf("a batch has %d columns, the schema %d", rec.NumCols(), len(s.fields))
	}
	for i, pf := range s.fields {
		col := rec.Column(i)
		if !arrow.TypeEqual(col.DataType(), pf.want) {
			return mismatchf("column %d (%q) is %s, the schema says %s", i, pf.pages.field.Name, col.DataType(), pf.want)
		}
	}
	for i, pf := range s.fields {
		col := rec.Column(i)
		col.Retain()
		pf.parts = append(pf.parts, col)
		pf.rows += col.Len()
		pf.bytes += sliceBytes(col)
		if err := s.flushField(pf, false); err != nil {
			return err
		}
	}
	s.rows += rec.NumRows()
	return nil
}

// flushField writes pf's due pages: with all, every pending row (in even
// pages, as WriteFile cuts a column); otherwise whole maxPageRows pages
// once that many rows wait, or all of them once they reach
// targetPageBytes.
func (s *streamFile) flushField(pf *pendingField, all bool) error {
	target := int64(targetPageBytes)
	if s.pageBytes > 0 {
		target = s.pageBytes
	}
	if pf.rows == 0 || (!all && pf.rows < maxPageRows && pf.bytes < target) {
		return nil
	}
	arr, err := pf.join()
	if err != nil {
		return err
	}
	defer arr.Release()
	n := arr.Len()
	if all || pf.bytes >= target {
		pf.rows, pf.bytes = 0, 0
		return pf.pages.write(s.c, arr, evenPageRows(arr, n), s.layout)
	}
	k := n - n%maxPageRows
	head := array.NewSlice(arr, 0, int64(k))
	defer head.Release()
	if err := pf.pages.write(s.c, head, maxPageRows, s.layout); err != nil {
		return err
	}
	if k < n {
		pf.parts = append(pf.parts, array.NewSlice(arr, int64(k), int64(n)))
	}
	pf.rows = n - k
	pf.bytes = 0
	if k < n {
		pf.bytes = sliceBytes(pf.parts[0])
	}
	return nil
}

// join takes pf's pending parts as one array.
func (pf *pendingField) join() (arrow.Array, error) {
	parts := pf.parts
	pf.parts = nil
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	if len(parts) == 1 {
		parts[0].Retain()
		return parts[0], nil
	}
	if a := rejoin(parts); a != nil {
		return a, nil
	}
	a, err := array.Concatenate(parts, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("datawriter: concatenate column %q: %w", pf.pages.field.Name, err)
	}
	return a, nil
}

// rejoin returns parts as one array without copying when they are
// consecutive slices of the same buffers (a refresh hands over the batches
// of one decoded page this way), nil otherwise. Only arrays without child
// data qualify: a slice of a nested array may rebase its children.
func rejoin(parts []arrow.Array) arrow.Array {
	first := parts[0].Data()
	bufs := first.Buffers()
	plain := func(d arrow.ArrayData) bool {
		// (Dictionary() is a non-nil interface even without one.)
		return len(d.Children()) == 0 && d.DataType().ID() != arrow.DICTIONARY
	}
	if !plain(first) {
		return nil
	}
	end := first.Offset() + first.Len()
	nulls := parts[0].NullN()
	for _, p := range parts[1:] {
		d := p.Data()
		if d.Offset() != end || !plain(d) || !arrow.TypeEqual(d.DataType(), first.DataType()) || !slices.Equal(d.Buffers(), bufs) {
			return nil
		}
		end += d.Len()
		nulls += p.NullN()
	}
	d := array.NewData(first.DataType(), end-first.Offset(), bufs, nil, nulls, first.Offset())
	defer d.Release()
	return array.MakeFromData(d)
}

// finish writes the remaining rows and the file's metadata, makes the
// file durable (file and directory synced; with a batch, both syncs are
// handed to it) and returns its fragment.
func (s *streamFile) finish(batch *vfs.SyncBatch) (format.NewFragment, error) {
	for _, pf := range s.fields {
		if err := s.flushField(pf, true); err != nil {
			return format.NewFragment{}, s.fail("write", err)
		}
	}
	for _, pf := range s.fields {
		if err := pf.pages.finish(s.c); err != nil {
			return format.NewFragment{}, s.fail("write", err)
		}
		for _, id := range pf.pages.ids {
			s.df.ColumnIndices = append(s.df.ColumnIndices, int32(len(s.df.Fields)))
			s.df.Fields = append(s.df.Fields, id)
		}
	}
	if err := s.c.finish(format.ProtoFields(s.schema), metadataBytes(s.schema.Metadata), uint64(s.rows)); err != nil {
		return format.NewFragment{}, s.fail("write", err)
	}
	if err := s.bw.Flush(); err != nil {
		return format.NewFragment{}, s.fail("write", err)
	}
	full := path.Join(s.dir, s.df.Path)
	if batch != nil {
		f := s.file
		s.file = nil
		if err := batch.AddFile(full, f); err != nil { // closes f on error
			_ = s.fsys.Remove(full)
			return format.NewFragment{}, fmt.Errorf("datawriter: %w", err)
		}
		if err := batch.AddDir(s.dir); err != nil {
			_ = s.fsys.Remove(full)
			return format.NewFragment{}, fmt.Errorf("datawriter: %w", err)
		}
		s.df.SizeBytes = s.c.pos
		return format.NewFragment{Files: []format.DataFile{s.df}, PhysicalRows: uint64(s.rows)}, nil
	}
	if err := s.file.Sync(); err != nil {
		return format.NewFragment{}, s.fail("sync", err)
	}
	err := s.file.Close()
	s.file = nil
	if err != nil {
		_ = s.fsys.Remove(full)
		return format.NewFragment{}, fmt.Errorf("datawriter: close %s: %w", full, err)
	}
	if err := s.fsys.SyncDir(s.dir); err != nil {
		_ = s.fsys.Remove(full)
		return format.NewFragment{}, fmt.Errorf("datawriter: sync %s: %w", s.dir, err)
	}
	s.df.SizeBytes = s.c.pos
	return format.NewFragment{Files: []format.DataFile{s.df}, PhysicalRows: uint64(s.rows)}, nil
}

// fail abandons the file (closed and removed, best effort) and wraps err.
func (s *streamFile) fail(op string, err error) error {
	s.abandon()
	return fmt.Errorf("datawriter: %s %s: %w", op, path.Join(s.dir, s.df.Path), err)
}

// abandon releases the pending rows and removes the partial file.
func (s *streamFile) abandon() {
	for _, pf := range s.fields {
		for _, p := range pf.parts {
			p.Release()
		}
		pf.parts = nil
	}
	if s.file != nil {
		_ = s.file.Close()
		s.file = nil
		_ = s.fsys.Remove(path.Join(s.dir, s.df.Path))
	}
}

// sliceBytes estimates the bytes of a's rows alone (a may be a slice of
// larger buffers): exact for fixed-width and string/binary arrays, the
// whole buffers otherwise (an overestimate only cuts pages earlier).
func sliceBytes(a arrow.Array) int64 {
	switch t := a.DataType().(type) {
	case arrow.FixedWidthDataType:
		return (int64(a.Len())*int64(t.BitWidth()) + 7) / 8
	}
	switch v := a.(type) {
	case *array.String:
		if v.Len() == 0 {
			return 0
		}
		return int64(v.ValueOffset(v.Len()-1)+v.ValueLen(v.Len()-1)-v.ValueOffset(0)) + 4*int64(v.Len())
	case *array.Binary:
		if v.Len() == 0 {
			return 0
		}
		o := v.ValueOffsets()
		return int64(o[len(o)-1]-o[0]) + 4*int64(v.Len())
	}
	return arrayBytes(a.Data())
}
