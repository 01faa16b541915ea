package datafile

import (
	"fmt"
	"io"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/mvd-project/mvd/lance/internal/pb/enc20pb"

	"github.com/mvd-project/mvd/lance/internal/format"
	"github.com/mvd-project/mvd/lance/internal/pb/filepb"
	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// Reader decodes one Lance data file. It is safe for concurrent use: all
// state is read at Open and never modified.
type Reader struct {
	r            io.ReaderAt
	size         int64
	name         string
	major, minor int
	numRows      uint64
	schema       *format.Schema
	cols         []*filepb.ColumnMetadata
	colBufs      [][]span
	// colErr holds, per column, why it cannot be read (an unsupported
	// column-level encoding), reported only when the column is read.
	colErr []error
	tree   *fieldTree
	// limits bounds what a single page may expand to, so that a corrupt
	// count cannot drive a huge allocation.
	limits limits
	// legacy is set for a Lance file format 0.1 file (see legacy.go); the
	// 2.x fields above (cols, tree) are then unused.
	legacy *legacyFile
	// table is the table's schema (WithTableSchema), whose nullability a
	// legacy file's strings follow; nil: the file's own.
	table *format.Schema
}

// limits bounds allocations derived from untrusted counts.
type limits struct {
	// maxItems is the largest number of values/levels any page may expand to.
	maxItems uint64
	// maxBytes is the largest number of value bytes any page may expand to.
	maxBytes uint64
}

// Open reads the footer, the offset tables, global buffer 0 (the
// FileDescriptor) and all column metadata of the data file r of size bytes.
// name is used only in error messages. Columns are mapped to fields from
// the file's own schema: in 2.0 every field (parents included) has a column,
// in 2.1 and later only leaves do, in depth-first order.
func Open(r io.ReaderAt, size int64, name string) (*Reader, error) {
	// A page may expand to many more values than it has bytes (constant
	// pages, runs), so the bound is generous: it only stops absurd claims.
	return openLimited(r, size, name, limits{maxItems: max(uint64(size)*512, 1<<28), maxBytes: max(uint64(size)*1024, 1<<34)})
}

// openLimited is Open with explicit allocation limits (fuzz tests use
// small ones).
func openLimited(r io.ReaderAt, size int64, name string, lim limits) (*Reader, error) {
	rd, err := open(r, size, name, lim)
	if err != nil {
		return nil, decodeErr(name, fmt.Errorf("open lance file %s: %w", name, err))
	}
	return rd, nil
}

func open(r io.ReaderAt, size int64, name string, lim limits) (*Reader, error) {
	// One read of the file's end holds the footer of either format (the
	// legacy footer is its last 16 bytes), and the metadata read after it
	// stops where it starts: on an object store each is one ranged GET,
	// and no byte is fetched twice.
	end := make([]byte, min(size, footerSize))
	if len(end) > 0 {
		if _, err := r.ReadAt(end, size-int64(len(end))); err != nil {
			return nil, fmt.Errorf("read footer: %w", storageErr(err))
		}
	}
	if len(end) >= legacyFooterSize {
		if tail := end[len(end)-legacyFooterSize:]; isLegacyFooter(tail) {
			return openLegacy(r, size, name, tail, lim)
		}
	}
	if size < footerSize {
		return nil, fmt.Errorf("file is %d bytes, too small for a footer", size)
	}
	ft, err := parseFooter(end, size)
	if err != nil {
		return nil, err
	}
	major, minor, err := ft.version()
	if err != nil {
		return nil, err
	}
	// Column metadata, both offset tables and the footer are contiguous.
	tail := make([]byte, uint64(size)-ft.columnMetaStart)
	meta := len(tail) - footerSize
	copy(tail[meta:], end)
	if meta > 0 {
		if _, err := r.ReadAt(tail[:meta], int64(ft.columnMetaStart)); err != nil {
			err = storageErr(err)
			return nil, fmt.Errorf("read metadata: %w", err)
		}
	}
	cmoOff := ft.cmoTableStart - ft.columnMetaStart
	gboOff := ft.gboTableStart - ft.columnMetaStart
	cmo, err := parseSpans(tail[cmoOff:gboOff], int(ft.numColumns), uint64(size), "column metadata")
	if err != nil {
		return nil, err
	}
	gbo, err := parseSpans(tail[gboOff:uint64(len(tail))-footerSize], int(ft.numGlobalBufs), uint64(size), "global buffer")
	if err != nil {
		return nil, err
	}
	if len(gbo) == 0 {
		return nil, fmt.Errorf("no global buffer 0 (file descriptor)")
	}
	gb := make([]byte, gbo[0].size)
	if _, err := r.ReadAt(gb, int64(gbo[0].pos)); err != nil {
		err = storageErr(err)
		return nil, fmt.Errorf("read global buffer 0: %w", err)
	}
	var fd tablepb.FileDescriptor
	if err := proto.Unmarshal(gb, &fd); err != nil {
		return nil, fmt.Errorf("decode file descriptor: %w", err)
	}
	if fd.GetSchema() == nil {
		return nil, fmt.Errorf("file descriptor has no schema")
	}
	schema, err := format.NewSchema(fd.GetSchema().GetFields(), fd.GetSchema().GetMetadata())
	if err != nil {
		return nil, fmt.Errorf("file schema: %w", err)
	}
	rd := &Reader{
		r: r, size: size, name: name, major: major, minor: minor,
		numRows: fd.GetLength(), schema: schema,
		limits: lim,
	}
	for i, s := range cmo {
		if s.pos < ft.columnMetaStart || s.pos+s.size > ft.cmoTableStart {
			return nil, fmt.Errorf("column %d metadata at %d+%d is outside the metadata region", i, s.pos, s.size)
		}
		var cm filepb.ColumnMetadata
		if err := proto.Unmarshal(tail[s.pos-ft.columnMetaStart:s.pos-ft.columnMetaStart+s.size], &cm); err != nil {
			return nil, fmt.Errorf("decode column %d metadata: %w", i, err)
		}
		if len(cm.BufferOffsets) != len(cm.BufferSizes) {
			return nil, fmt.Errorf("column %d has %d buffer offsets but %d sizes", i, len(cm.BufferOffsets), len(cm.BufferSizes))
		}
		bufs := make([]span, len(cm.BufferOffsets))
		for k := range bufs {
			bufs[k] = span{cm.BufferOffsets[k], cm.BufferSizes[k]}
			if bufs[k].pos > uint64(size) || bufs[k].size > uint64(size)-bufs[k].pos {
				return nil, fmt.Errorf("column %d buffer %d is outside the file", i, k)
			}
		}
		for p, pg := range cm.Pages {
			if len(pg.BufferOffsets) != len(pg.BufferSizes) {
				return nil, fmt.Errorf("column %d page %d has %d buffer offsets but %d sizes", i, p, len(pg.BufferOffsets), len(pg.BufferSizes))
			}
			for k := range pg.BufferOffsets {
				if pg.BufferOffsets[k] > uint64(size) || pg.BufferSizes[k] > uint64(size)-pg.BufferOffsets[k] {
					return nil, fmt.Errorf("column %d page %d buffer %d is outside the file", i, p, k)
				}
			}
		}
		rd.cols = append(rd.cols, &cm)
		rd.colBufs = append(rd.colBufs, bufs)
		rd.colErr = append(rd.colErr, columnEncodingErr(&cm))
	}
	tree, err := buildTree(schema, major == 2 && minor == 0)
	if err != nil {
		return nil, err
	}
	if tree.numColumns != len(rd.cols) {
		return nil, fmt.Errorf("schema needs %d columns, file has %d", tree.numColumns, len(rd.cols))
	}
	rd.tree = tree
	return rd, nil
}

// columnEncodingErr checks the column-level encoding: plain values (all
// LanceDB 0.39 writes) or nothing. Zone maps and blob columns change how
// pages are read and are refused.
func columnEncodingErr(cm *filepb.ColumnMetadata) error {
	d := cm.GetEncoding().GetDirect()
	if d == nil {
		if cm.GetEncoding().GetIndirect() != nil {
			return unsupportedErr("column encoding stored out of line is not supported")
		}
		return nil
	}
	var a anypb.Any
	if err := proto.Unmarshal(d.GetEncoding(), &a); err != nil {
		return fmt.Errorf("decode column encoding: %w", err)
	}
	if a.MessageName() != "lance.encodings.ColumnEncoding" {
		return unsupportedErr("column encoding is %q", a.TypeUrl)
	}
	var ce enc20pb.ColumnEncoding
	if err := proto.Unmarshal(a.Value, &ce); err != nil {
		return fmt.Errorf("decode column encoding: %w", err)
	}
	if err := checkKnown(ce.ProtoReflect()); err != nil {
		return err
	}
	if ce.GetValues() == nil {
		return unsupportedErr("column encoding %T is not supported", ce.GetColumnEncoding())
	}
	return nil
}

// Version reports the file format version (2.0, 2.1 or 2.2). 2.0 files say
// 0.3 in their footer and are reported as 2.0; legacy (format 0.1) files
// report what their footer says, 0.1 or 0.2.
func (r *Reader) Version() (major, minor int) { return r.major, r.minor }

// NumRows is the number of rows in the file.
func (r *Reader) NumRows() uint64 { return r.numRows }

// Schema is the file's own schema (global buffer 0), the same type as a
// table's (lance.Schema).
func (r *Reader) Schema() *format.Schema { return r.schema }

// Name is the name given to Open.
func (r *Reader) Name() string { return r.name }

// readSpan reads size bytes at pos.
func (r *Reader) readSpan(s span) ([]byte, error) {
	b := make([]byte, s.size)
	if _, err := r.r.ReadAt(b, int64(s.pos)); err != nil {
		err = storageErr(err)
		return nil, err
	}
	return b, nil
}
