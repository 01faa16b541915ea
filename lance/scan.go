package lance

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance/internal/format"
)

// Names of the row metadata columns a scan can add, as LanceDB names them.
const (
	ColRowID         = "_rowid"
	ColRowAddr       = "_rowaddr"
	ColCreatedAt     = "_row_created_at_version"
	ColLastUpdatedAt = "_row_last_updated_at_version"
)

// DefaultBatchSize is the default number of rows per scanned batch.
const DefaultBatchSize = 8192

// ScanOptions configures a scan.
type ScanOptions struct {
	// Columns are the top-level columns to read, in output order; nil reads
	// every column in schema order.
	Columns []string
	// RowMeta appends _rowid, _rowaddr, _row_created_at_version and
	// _row_last_updated_at_version (uint64) after the columns.
	RowMeta bool
	// RowID appends _rowid alone (uint64) after the columns, for readers
	// that need the row identity only (a view's plan); RowMeta, when also
	// set, wins.
	RowID bool
	// NoRowVersions, with RowMeta, leaves out _row_created_at_version and
	// _row_last_updated_at_version (the costliest to build): _rowid and
	// _rowaddr only, for readers that need no more (a view rebuild).
	NoRowVersions bool
	// BatchSize caps the rows of one batch (DefaultBatchSize when 0).
	// Batches can be shorter: at fragment and page boundaries, and after
	// deleted rows are removed.
	BatchSize int
	// Limit stops the scan after this many rows; 0 means no limit. A
	// filtered scan reads the other columns at no selected row past it.
	Limit uint64
	// Fragments restricts the scan to the fragments with these ids (read
	// in the snapshot's fragment order, whatever the order here); nil
	// scans every fragment. An id the snapshot does not hold is an error.
	// An incremental refresh reads appended fragments this way.
	Fragments []uint64
	// Narrow decodes only each batch's rows instead of the whole page
	// holding them: cheaper for a scan read for a few batches only (a
	// capped view's rebuild), dearer for a full one (the mini-block chunks
	// at batch edges decode twice).
	Narrow bool
	// Filter, when set, keeps only the rows it selects, reading the other
	// columns at those rows only (see ScanFilter). Batches may then hold
	// fewer rows than BatchSize anywhere, none empty.
	Filter *ScanFilter
	// Mem allocates the buffers the scan builds (validity bitmaps, row
	// metadata, concatenations); memory.DefaultAllocator when nil. Decoded
	// value buffers are ordinary Go memory owned by the batches, so Mem
	// alone cannot bound a scan: the batch size and page size do.
	Mem memory.Allocator
}

// Scanner reads the live rows of one version as Arrow record batches, in
// LanceDB's scan order (fragment order, then offset). It is not safe for
// concurrent use; Close releases what it holds.
type Scanner struct {
	snap   *Snapshot
	opts   ScanOptions
	schema *arrow.Schema
	fields []scanField
	frags  []*Fragment // the fragments read, in scan order

	frag    int // index into frags of the current fragment
	open    *fragmentReader
	pending arrow.RecordBatch // a filtered batch's rows not yet returned
	offset  uint64            // next physical offset in the current fragment
	emitted uint64
	closed  bool
}

// scanField is one projected top-level field.
type scanField struct {
	field *Field
	typ   arrow.DataType
}

// Scan starts a scan of the snapshot. It reads nothing yet: files are
// opened as Next reaches them.
func (snap *Snapshot) Scan(ctx context.Context, opts ScanOptions) (*Scanner, error) {
	if err := snap.ctxErr(ctx, "scan"); err != nil {
		return nil, err
	}
	return snap.newScanner(opts)
}

func (snap *Snapshot) newScanner(opts ScanOptions) (*Scanner, error) {
	t, m := snap.table, snap.Manifest
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.Mem == nil {
		opts.Mem = memory.DefaultAllocator
	}
	s := &Scanner{snap: snap, opts: opts}
	names := opts.Columns
	if names == nil {
		for _, f := range m.Schema.Fields {
			names = append(names, f.Name)
		}
	}
	var out []arrow.Field
	seen := map[string]bool{}
	for _, name := range names {
		f := m.Schema.FieldByName(name)
		if f == nil {
			return nil, t.errorf(m.Version, "scan", "no column %q in the table (columns: %s)", name, m.Schema.ColumnList())
		}
		if seen[name] {
			return nil, t.errorf(m.Version, "scan", "column %q requested twice", name)
		}
		seen[name] = true
		af, err := f.Arrow()
		if err != nil {
			return nil, t.wrap(m.Version, "scan", err)
		}
		s.fields = append(s.fields, scanField{field: f, typ: af.Type})
		out = append(out, af)
	}
	for _, name := range opts.metaNames() {
		out = append(out, arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Uint64, Nullable: true})
	}
	md := format.ArrowMetadata(m.Schema.Metadata)
	s.schema = arrow.NewSchema(out, &md)
	s.frags = m.Fragments
	if opts.Fragments != nil {
		want := make(map[uint64]bool, len(opts.Fragments))
		for _, id := range opts.Fragments {
			want[id] = true
		}
		s.frags = make([]*Fragment, 0, len(want))
		for _, f := range m.Fragments {
			if want[f.ID] {
				s.frags = append(s.frags, f)
				delete(want, f.ID)
			}
		}
		for id := range want {
			return nil, t.errorf(m.Version, "scan", "no fragment %d in version %d", id, m.Version)
		}
	}
	return s, nil
}

// Schema returns the schema of the batches.
func (s *Scanner) Schema() *arrow.Schema { return s.schema }

// Next returns the next batch, or io.EOF after the last one. The caller
// releases the batch.
func (s *Scanner) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for !s.closed {
		if s.opts.Limit > 0 && s.emitted >= s.opts.Limit {
			break
		}
		if err := s.snap.ctxErr(ctx, "scan"); err != nil {
			return nil, err
		}
		if s.open == nil {
			if s.frag >= len(s.frags) {
				break
			}
			fr, err := s.snap.table.openFragment(s.snap.Manifest, s.frags[s.frag], s.fields, len(s.opts.metaNames()))
			if err != nil {
				return nil, err
			}
			fr.narrow = s.opts.Narrow
			if s.opts.Filter != nil {
				if err := s.openFilter(fr); err != nil {
					fr.close()
					return nil, err
				}
			}
			s.open, s.offset = fr, 0
		}
		if s.pending != nil {
			return s.emit(s.takePending()), nil
		}
		if s.offset >= s.open.frag.PhysicalRows {
			s.open.close()
			s.open = nil
			s.frag++
			continue
		}
		var rec arrow.RecordBatch
		var next uint64
		var err error
		if s.opts.Filter != nil {
			rec, next, err = s.open.filteredBatch(ctx, s.schema, s.opts.Filter, s.offset, s.want(), s.opts.Mem)
		} else {
			rec, next, err = s.open.batch(ctx, s.schema, s.offset, uint64(s.opts.BatchSize), s.opts.Mem)
		}
		if err != nil {
			return nil, err
		}
		s.offset = next
		if rec == nil {
			continue // every row of the range was deleted or filtered out
		}
		if s.opts.Filter != nil {
			s.pending = rec
			continue
		}
		return s.emit(rec), nil
	}
	s.Close()
	return nil, io.EOF
}

// emit counts rec's rows as delivered, cut to what Limit leaves.
func (s *Scanner) emit(rec arrow.RecordBatch) arrow.RecordBatch {
	if s.opts.Limit > 0 && s.emitted+uint64(rec.NumRows()) > s.opts.Limit {
		cut := rec.NewSlice(0, int64(s.opts.Limit-s.emitted))
		rec.Release()
		rec = cut
	}
	s.emitted += uint64(rec.NumRows())
	return rec
}

// want is how many more rows the scan may deliver (Limit less what was
// emitted; unbounded without a Limit): a filtered range reads the other
// columns at no more selected rows than that.
func (s *Scanner) want() uint64 {
	if s.opts.Limit == 0 {
		return ^uint64(0)
	}
	return s.opts.Limit - min(s.emitted, s.opts.Limit)
}

// takePending returns the next at most BatchSize rows of the pending
// filtered batch.
func (s *Scanner) takePending() arrow.RecordBatch {
	p := s.pending
	if p.NumRows() <= int64(s.opts.BatchSize) {
		s.pending = nil
		return p
	}
	head := p.NewSlice(0, int64(s.opts.BatchSize))
	s.pending = p.NewSlice(int64(s.opts.BatchSize), p.NumRows())
	p.Release()
	return head
}

// Close releases the scanner's open files and decoded pages.
func (s *Scanner) Close() error {
	if s.pending != nil {
		s.pending.Release()
		s.pending = nil
	}
	if s.open != nil {
		s.open.close()
		s.open = nil
	}
	s.closed = true
	return nil
}
