package datawriter

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance/internal/format"
	"github.com/mvd-project/mvd/lance/internal/pb/filepb"
	"github.com/mvd-project/mvd/vfs"
)

// parseVersion maps a table's data file version to what is written.
func parseVersion(v format.FileVersion) (fileLayout, error) {
	switch v {
	case format.V2_2:
		return fileLayout{major: 2, minor: 2, largeChunk: true}, nil
	case format.V2_1:
		return fileLayout{major: 2, minor: 1}, nil
	case format.V2_0:
		return fileLayout{major: 0, minor: 3, v20: true}, nil // 2.0 files say 0.3
	}
	return fileLayout{}, unsupportedf("data file version %q (2.0, 2.1 and 2.2 are written)", v)
}

// Pages are cut at about 8 MiB (as Lance aims for), which also bounds the
// writer's memory beyond its input, and at 64Ki rows, close to the page
// lengths LanceDB's own 2.0 writer produces.
const (
	targetPageBytes = 8 << 20
	maxPageRows     = 1 << 16
)

// WriteFile writes the rows of recs, which must match schema exactly, as
// one data file under root/data/, makes it durable (file and directory
// synced) and returns its manifest entry. All rows go to one file; use
// WriteFragments to respect LanceDB's fragment size.
func WriteFile(fsys vfs.FS, root string, schema *format.Schema, version format.FileVersion, recs []arrow.RecordBatch) (format.DataFile, uint64, error) {
	return writeFile(fsys, root, schema, version, recs, nil)
}

// writeFile is WriteFile; with a batch, the file's and data/'s syncs are
// left to it (FragmentWriter.DeferSync).
func writeFile(fsys vfs.FS, root string, schema *format.Schema, version format.FileVersion, recs []arrow.RecordBatch, batch *vfs.SyncBatch) (format.DataFile, uint64, error) {
	f, err := parseVersion(version)
	if err != nil {
		return format.DataFile{}, 0, err
	}
	cols, n, err := concatColumns(schema, recs)
	if err != nil {
		return format.DataFile{}, 0, err
	}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	if n == 0 {
		return format.DataFile{}, 0, fmt.Errorf("datawriter: no rows to write")
	}
	df := format.DataFile{Path: newFileName(), Major: uint32(f.major), Minor: uint32(f.minor)}
	if f.v20 {
		df.Major, df.Minor = 2, 0 // the manifest names 2.0 "2.0"
	}
	dir := path.Join(root, "data")
	err = writeDurable(fsys, dir, df.Path, func(w io.Writer) (uint64, error) {
		c := &container{w: w, major: f.major, minor: f.minor}
		for i, field := range schema.Fields {
			var ids []int32
			var err error
			if f.v20 {
				ids, err = writeField20(c, field, cols[i])
			} else {
				ids, err = writeField(c, field, cols[i], f)
			}
			if err != nil {
				return 0, err
			}
			for _, id := range ids {
				df.ColumnIndices = append(df.ColumnIndices, int32(len(df.Fields)))
				df.Fields = append(df.Fields, id)
			}
		}
		if err := c.finish(format.ProtoFields(schema), metadataBytes(schema.Metadata), uint64(n)); err != nil {
			return 0, err
		}
		return c.pos, nil
	}, &df.SizeBytes, batch)
	if err != nil {
		return format.DataFile{}, 0, err
	}
	return df, uint64(n), nil
}

// writeField writes the columns of one top-level field, page by page, and
// returns the field ids of its columns (leaves, depth first).
func writeField(c *container, field *format.Field, arr arrow.Array, f fileLayout) ([]int32, error) {
	st := &fieldPages{field: field}
	n := arr.Len()
	if err := st.write(c, arr, evenPageRows(arr, n), f); err != nil {
		return nil, err
	}
	if err := st.finish(c); err != nil {
		return nil, err
	}
	return st.ids, nil
}

// evenPageRows is the page length that cuts n rows of arr into equal pages
// of at most maxPageRows rows and about targetPageBytes bytes.
func evenPageRows(arr arrow.Array, n int) int {
	pages := max(1, int(arrayBytes(arr.Data())/targetPageBytes), (n+maxPageRows-1)/maxPageRows)
	return (n + pages - 1) / pages
}

// fieldPages is the pages written so far of one top-level field's columns.
type fieldPages struct {
	field *format.Field
	ids   []int32 // field ids of the leaves, depth first
	cols  [][]*filepb.ColumnMetadata_Page
	rows  int // rows written
	// scratch holds, per leaf, the value buffer of its last page written,
	// for the next page (the container has copied it out by then).
	scratch [][]byte
}

// write encodes every row of arr as pages of per rows (the last may be
// shorter), one page per leaf each, after the rows already written.
func (st *fieldPages) write(c *container, arr arrow.Array, per int, f fileLayout) error {
	// writeSlice encodes rows [lo, hi) as one page per leaf. When a chunk
	// would overflow its level counts (many null or empty lists share a
	// chunk, as all of a page's trailing ones do), the rows are split in
	// two pages instead; nothing is written until every leaf encoded.
	var writeSlice func(lo, hi int) error
	writeSlice = func(lo, hi int) error {
		part := array.NewSlice(arr, int64(lo), int64(hi))
		defer part.Release()
		ls, err := leaves(st.field, part)
		if err != nil {
			return err
		}
		if st.cols == nil {
			st.cols = make([][]*filepb.ColumnMetadata_Page, len(ls))
			st.scratch = make([][]byte, len(ls))
			for _, l := range ls {
				st.ids = append(st.ids, l.field.ID)
			}
		}
		ps := make([]page, len(ls))
		for j, l := range ls {
			if ps[j], err = encodePage(l, hi-lo, f, st.scratch[j]); err != nil {
				if errors.Is(err, errChunkLevels) && hi-lo > 1 {
					mid := lo + (hi-lo)/2
					if err := writeSlice(lo, mid); err != nil {
						return err
					}
					return writeSlice(mid, hi)
				}
				return err
			}
		}
		for j, p := range ps {
			p.first = uint64(st.rows + lo)
			mp, err := c.addPage(p)
			if err != nil {
				return err
			}
			st.cols[j] = append(st.cols[j], mp)
			if p.scratch != nil {
				st.scratch[j] = p.scratch[:0]
			}
		}
		return nil
	}
	n := arr.Len()
	for lo := 0; lo < n; lo += per {
		if err := writeSlice(lo, min(n, lo+per)); err != nil {
			return err
		}
	}
	st.rows += n
	return nil
}

// finish records the field's columns; every page is written.
func (st *fieldPages) finish(c *container) error {
	for _, pages := range st.cols {
		if err := c.addColumn(pages); err != nil {
			return err
		}
	}
	return nil
}

// encodePage encodes the n rows of one leaf in the layout its kind needs;
// dst is a buffer it may reuse (the scratch of an earlier page).
func encodePage(l *leaf, n int, f fileLayout, dst []byte) (page, error) {
	switch l.kind {
	case kindFSL:
		return fullZipFSLPage(l, n)
	case kindNull:
		return allNullPage(l, n), nil
	}
	if needsFullZip(l, f) {
		if l.kind == kindFixed {
			return fullZipFixedPage(l, n)
		}
		return fullZipVariablePage(l, n)
	}
	if d := stringDictionary(l, f); d != nil {
		l = d
	} else if d := fixedDictionary(l, f); d != nil {
		l = d
	} else if c := fsstLeaf(l, f); c != nil {
		l = c
	}
	return miniBlockPage(l, n, f, dst)
}

// arrayBytes estimates an array's size from its buffers.
func arrayBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += arrayBytes(c)
	}
	return n
}

// concatColumns checks recs against the schema and joins each column into
// one array.
func concatColumns(schema *format.Schema, recs []arrow.RecordBatch) ([]arrow.Array, int, error) {
	cols := make([]arrow.Array, len(schema.Fields))
	n := 0
	for _, rec := range recs {
		if int(rec.NumCols()) != len(schema.Fields) {
			return nil, 0, mismatchf("a batch has %d columns, the schema %d", rec.NumCols(), len(schema.Fields))
		}
		n += int(rec.NumRows())
	}
	for i, f := range schema.Fields {
		want, err := f.ArrowType()
		if err != nil {
			return nil, 0, err
		}
		parts := make([]arrow.Array, 0, len(recs))
		for _, rec := range recs {
			col := rec.Column(i)
			if !arrow.TypeEqual(col.DataType(), want) {
				return nil, 0, mismatchf("column %d (%q) is %s, the schema says %s", i, f.Name, col.DataType(), want)
			}
			parts = append(parts, col)
		}
		if len(parts) == 1 {
			parts[0].Retain()
			cols[i] = parts[0]
			continue
		}
		if len(parts) == 0 {
			cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, want, 0)
			continue
		}
		a, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, 0, fmt.Errorf("datawriter: concatenate column %q: %w", f.Name, err)
		}
		cols[i] = a
	}
	return cols, n, nil
}

func metadataBytes(m map[string]string) map[string][]byte {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = []byte(v)
	}
	return out
}

// newFileName returns a data file name in LanceDB's style: 24 binary
// digits of 3 random bytes, then 26 hex digits of 13 more.
func newFileName() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	s := ""
	for _, x := range b[:3] {
		bs := strconv.FormatUint(uint64(x), 2)
		for len(bs) < 8 {
			bs = "0" + bs
		}
		s += bs
	}
	return s + hex.EncodeToString(b[3:]) + ".lance"
}

// writeDurable creates dir/name exclusively, streams the file through
// fill, syncs it and the directory (or, with a batch, hands both syncs to
// it), and stores its size in *size. A failure removes the partial file
// (best effort) and is returned; a failed sync is never retried.
func writeDurable(fsys vfs.FS, dir, name string, fill func(io.Writer) (uint64, error), size *uint64, batch *vfs.SyncBatch) error {
	if err := vfs.MkdirAllDurable(fsys, dir); err != nil {
		return fmt.Errorf("datawriter: create %s: %w", dir, err)
	}
	full := path.Join(dir, name)
	w, err := vfs.CreateFresh(fsys, full) // a random name: no HEAD first on S3
	if err != nil {
		return fmt.Errorf("datawriter: create %s: %w", full, err)
	}
	fail := func(op string, err error) error {
		_ = w.Close()
		_ = fsys.Remove(full)
		return fmt.Errorf("datawriter: %s %s: %w", op, full, err)
	}
	bw := newGrowWriter(w, dataFileBuffer)
	n, err := fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return fail("write", err)
	}
	if batch != nil {
		if err := batch.AddFile(full, w); err != nil {
			_ = fsys.Remove(full)
			return fmt.Errorf("datawriter: %w", err)
		}
		if err := batch.AddDir(dir); err != nil {
			_ = fsys.Remove(full)
			return fmt.Errorf("datawriter: %w", err)
		}
		*size = n
		return nil
	}
	if err := w.Sync(); err != nil {
		return fail("sync", err)
	}
	if err := w.Close(); err != nil {
		_ = fsys.Remove(full)
		return fmt.Errorf("datawriter: close %s: %w", full, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		_ = fsys.Remove(full)
		return fmt.Errorf("datawriter: sync %s: %w", dir, err)
	}
	*size = n
	return nil
}
