package datafile

import (
	"context"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// rowRange is the half-open row interval [lo, hi).
type rowRange struct{ lo, hi uint64 }

// pageStarts returns the first row of each page of column c and the row
// after the last page. Columns of 2.1+ files and 2.0 columns outside lists
// hold exactly the file's rows; 2.0 list item columns (checkTotal false)
// hold their own count, bounded by the allocation limit.
func (r *Reader) pageStarts(c int) ([]uint64, error) {
	return r.pageStartsOf(c, true)
}

func (r *Reader) pageStartsOf(c int, checkTotal bool) ([]uint64, error) {
	limit := r.numRows
	if !checkTotal {
		limit = r.limits.maxItems
	}
	pages := r.cols[c].Pages
	out := make([]uint64, len(pages)+1)
	for i, p := range pages {
		if p.Length > limit || out[i]+p.Length > limit {
			return nil, fmt.Errorf("column %d page %d: %d rows run past the limit of %d", c, i, p.Length, limit)
		}
		out[i+1] = out[i] + p.Length
	}
	if checkTotal && out[len(pages)] != r.numRows {
		return nil, fmt.Errorf("column %d pages hold %d rows, file has %d", c, out[len(pages)], r.numRows)
	}
	return out, nil
}

// pageEnd is the end of the page holding row start, the smallest over the
// field's columns (its leaves in 2.1+, its own column in 2.0), so that a
// chunk read from start decodes each page once.
func (r *Reader) pageEnd(node *fieldNode, start uint64) (uint64, error) {
	cols := []int{node.column}
	if r.major != 2 || r.minor != 0 {
		cols = cols[:0]
		for _, l := range node.leaves() {
			cols = append(cols, l.column)
		}
	}
	end := r.numRows
	for _, c := range cols {
		s, err := r.pageStarts(c)
		if err != nil {
			return 0, fmt.Errorf("read %s %v: %w", r.name, node, err)
		}
		p := sort.Search(len(s)-1, func(i int) bool { return s[i+1] > start })
		if p < len(s)-1 {
			end = min(end, s[p+1])
		}
	}
	if end <= start {
		return 0, fmt.Errorf("read %s %v: no page holds row %d", r.name, node, start)
	}
	return end, nil
}

// fieldPaths returns the leaves of top-level node n with their paths.
func fieldPaths(n *fieldNode) map[int][]pathNode {
	out := map[int][]pathNode{}
	var walk func(x *fieldNode, path []pathNode)
	walk = func(x *fieldNode, path []pathNode) {
		path = append(append([]pathNode(nil), path...), pathNode{node: x, isList: isListType(x.f.LogicalType)})
		if len(x.children) == 0 {
			out[x.column] = path
			return
		}
		for _, c := range x.children {
			walk(c, path)
		}
	}
	walk(n, nil)
	return out
}

// ReadField decodes rows [start, start+n) of the top-level field fieldID
// into an Arrow array of type dt (the table schema's type for the field). A
// field the file does not contain (added to the table later) reads as nulls.
func (r *Reader) ReadField(ctx context.Context, fieldID int32, dt arrow.DataType, start, n uint64, mem memory.Allocator) (arrow.Array, error) {
	if start > r.numRows || n > r.numRows-start {
		return nil, fmt.Errorf("read %s field %d rows %d+%d: file has %d rows", r.name, fieldID, start, n, r.numRows)
	}
	if dt == nil {
		return nil, fmt.Errorf("read %s field %d: no Arrow type given", r.name, fieldID)
	}
	if r.legacy != nil {
		f, err := r.legacyTop(fieldID)
		if err != nil || f == nil {
			return array.MakeArrayOfNull(mem, dt, int(n)), err
		}
		return r.legacyRead(ctx, f, dt, start, start+n, mem)
	}
	node, ok := r.tree.byID[fieldID]
	if !ok {
		return array.MakeArrayOfNull(mem, dt, int(n)), nil
	}
	if node.f.ParentID >= 0 {
		return nil, fmt.Errorf("read %s field %d: not a top-level field", r.name, fieldID)
	}
	if n == 0 {
		return array.MakeArrayOfNull(mem, dt, 0), nil
	}
	arr, rg, err := r.readRange(ctx, node, dt, rowRange{start, start + n}, mem)
	if err != nil {
		return nil, decodeErr(r.name, err)
	}
	defer arr.Release()
	return array.NewSlice(arr, int64(start-rg.lo), int64(start-rg.lo+n)), nil
}

// ReadFieldRows decodes the given rows (sorted ascending, duplicates
// allowed) of the top-level field fieldID, reading only the pages that
// hold them. In 2.1+ files every byte is read and decoded at most once per
// call (see takePage); 2.0 pages decode whole, once per group of rows.
func (r *Reader) ReadFieldRows(ctx context.Context, fieldID int32, dt arrow.DataType, rows []uint64, mem memory.Allocator) (arrow.Array, error) {
	if dt == nil {
		return nil, fmt.Errorf("read %s field %d: no Arrow type given", r.name, fieldID)
	}
	for i, x := range rows {
		if x >= r.numRows {
			return nil, fmt.Errorf("read %s field %d: row %d is past the file's %d rows", r.name, fieldID, x, r.numRows)
		}
		if i > 0 && x < rows[i-1] {
			return nil, fmt.Errorf("read %s field %d: rows are not sorted at index %d", r.name, fieldID, i)
		}
	}
	if r.legacy != nil {
		return r.legacyRows(ctx, fieldID, dt, rows, mem)
	}
	node, ok := r.tree.byID[fieldID]
	if !ok {
		return array.MakeArrayOfNull(mem, dt, len(rows)), nil
	}
	if node.f.ParentID >= 0 {
		return nil, fmt.Errorf("read %s field %d: not a top-level field", r.name, fieldID)
	}
	if len(rows) == 0 {
		return array.MakeArrayOfNull(mem, dt, 0), nil
	}
	if r.major != 2 || r.minor != 0 {
		a, err := r.takeRows21(ctx, node, dt, rows, mem)
		return a, decodeErr(r.name, err)
	}
	// 2.0 pages decode whole, so rows are read one page at a time.
	return r.takeByUnit(rows, fieldID, mem,
		func(row uint64) (uint64, error) {
			end, err := r.pageEnd(node, row)
			return end, decodeErr(r.name, err)
		},
		func(lo, hi uint64) (arrow.Array, uint64, error) {
			arr, rg, err := r.readRange(ctx, node, dt, rowRange{lo, hi}, mem)
			return arr, rg.lo, decodeErr(r.name, err)
		})
}

// takeByUnit takes rows (ascending) from a column read a unit (a page, a
// legacy batch) at a time: end gives the first row past the unit holding
// a row, and read decodes rows [lo, hi) of one unit, returning the array
// and the row its first element is. Runs of consecutive rows are sliced
// out, not single rows, and the slices concatenated.
func (r *Reader) takeByUnit(rows []uint64, fieldID int32, mem memory.Allocator,
	end func(row uint64) (uint64, error), read func(lo, hi uint64) (arrow.Array, uint64, error)) (arrow.Array, error) {
	var parts []arrow.Array
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for i := 0; i < len(rows); {
		stop, err := end(rows[i])
		if err != nil {
			return nil, err
		}
		last := i
		for last+1 < len(rows) && rows[last+1] < stop {
			last++
		}
		arr, base, err := read(rows[i], rows[last]+1)
		if err != nil {
			return nil, err
		}
		for i <= last {
			j := i + 1
			for j <= last && rows[j] == rows[j-1]+1 {
				j++
			}
			parts = append(parts, array.NewSlice(arr, int64(rows[i]-base), int64(rows[j-1]-base+1)))
			i = j
		}
		arr.Release()
	}
	if len(parts) == 1 {
		parts[0].Retain()
		return parts[0], nil
	}
	out, err := array.Concatenate(parts, mem)
	if err != nil {
		return nil, fmt.Errorf("read %s field %d: %w", r.name, fieldID, err)
	}
	return out, nil
}

// readRange decodes exactly the rows of want of node (every leaf) and
// returns them with their range.
func (r *Reader) readRange(ctx context.Context, node *fieldNode, dt arrow.DataType, want rowRange, mem memory.Allocator) (arrow.Array, rowRange, error) {
	if r.major == 2 && r.minor == 0 {
		return r.readRange20(ctx, node, dt, want, mem)
	}
	paths := fieldPaths(node)
	cols := make([]int, 0, len(paths))
	for c := range paths {
		cols = append(cols, c)
	}
	sort.Ints(cols)
	for _, c := range cols {
		if err := r.colErr[c]; err != nil {
			return nil, rowRange{}, fmt.Errorf("read %s %v column %d: %w", r.name, node, c, err)
		}
	}
	// Every leaf decodes exactly the rows of want: pages (or, for flat
	// mini-block pages, chunks) are decoded and then sliced to the overlap.
	rg := want
	type job struct {
		col, page int
		rows      rowRange // page-local
	}
	var jobs []job
	for _, c := range cols {
		s, err := r.pageStarts(c)
		if err != nil {
			return nil, rowRange{}, fmt.Errorf("read %s %v: %w", r.name, node, err)
		}
		for p := 0; p+1 < len(s); p++ {
			if s[p+1] > rg.lo && s[p] < rg.hi {
				jobs = append(jobs, job{c, p, rowRange{max(rg.lo, s[p]) - s[p], min(rg.hi, s[p+1]) - s[p]}})
			}
		}
	}
	results := make([]*pageData, len(jobs))
	work := func(ctx context.Context, i int) error {
		j := jobs[i]
		pd, err := r.decodePage(j.col, j.page, j.rows)
		if err == nil {
			pd, err = pd.slice(j.rows.lo-pd.firstRow, j.rows.hi-pd.firstRow)
		}
		if err != nil {
			return fmt.Errorf("read %s %v column %d page %d: %w", r.name, node, j.col, j.page, err)
		}
		results[i] = pd
		return nil
	}
	if err := pageWorkers(ctx, len(jobs), work); err != nil {
		return nil, rowRange{}, err
	}
	leaves := map[int]*leafData{}
	for i, j := range jobs {
		ld := leaves[j.col]
		if ld == nil {
			ld = &leafData{path: paths[j.col], states: make([]nodeState, len(paths[j.col])), lim: r.limits}
			leaves[j.col] = ld
		}
		if err := ld.appendPage(results[i]); err != nil {
			return nil, rowRange{}, fmt.Errorf("read %s %v column %d page %d: %w", r.name, node, j.col, j.page, err)
		}
		results[i] = nil
	}
	d, err := buildNode(node, dt, 0, leaves, mem)
	if err != nil {
		return nil, rowRange{}, fmt.Errorf("read %s: %w", r.name, err)
	}
	defer d.Release()
	if uint64(d.Len()) != rg.hi-rg.lo {
		return nil, rowRange{}, fmt.Errorf("read %s %v: decoded %d rows, want %d", r.name, node, d.Len(), rg.hi-rg.lo)
	}
	return array.MakeFromData(d), rg, nil
}

// pageLayoutName is the message name of 2.1+ page encodings.
const pageLayoutName = "lance.encodings21.PageLayout"

// decodePage reads and decodes one 2.1+ page; want is the page-local row
// range needed (the result may cover more: see pageData.firstRow).
func (r *Reader) decodePage(c, p int, want rowRange) (*pageData, error) {
	layout, src, err := r.pageLayout(c, p)
	if err != nil {
		return nil, err
	}
	return r.decodeLayout(layout, src, r.cols[c].Pages[p].Length, want)
}

// pageLayout parses the layout of 2.1+ page p of column c and returns it
// with the page's buffers.
func (r *Reader) pageLayout(c, p int) (*enc21pb.PageLayout, fileBufs, error) {
	pg := r.cols[c].Pages[p]
	if pg.GetEncoding().GetDirect() == nil {
		return nil, fileBufs{}, fmt.Errorf("page encoding is not stored inline")
	}
	raw := pg.GetEncoding().GetDirect().GetEncoding()
	var a anypb.Any
	if err := proto.Unmarshal(raw, &a); err != nil {
		return nil, fileBufs{}, fmt.Errorf("decode page encoding: %w", err)
	}
	if a.MessageName() != pageLayoutName {
		return nil, fileBufs{}, fmt.Errorf("page encoding is %q, want %s", a.TypeUrl, pageLayoutName)
	}
	var layout enc21pb.PageLayout
	if err := proto.Unmarshal(a.Value, &layout); err != nil {
		return nil, fileBufs{}, fmt.Errorf("decode page layout: %w", err)
	}
	if err := checkKnown(layout.ProtoReflect()); err != nil {
		return nil, fileBufs{}, err
	}
	src := fileBufs{r: r, spans: make([]span, len(pg.BufferOffsets))}
	for i := range src.spans {
		src.spans[i] = span{pg.BufferOffsets[i], pg.BufferSizes[i]}
	}
	return &layout, src, nil
}

// decodeLayout decodes a page of numRows rows with the given layout.
func (r *Reader) decodeLayout(layout *enc21pb.PageLayout, src fileBufs, numRows uint64, want rowRange) (*pageData, error) {
	switch l := layout.Layout.(type) {
	case *enc21pb.PageLayout_MiniBlockLayout:
		return decodeMiniBlock(l.MiniBlockLayout, src, numRows, want, r.limits)
	case *enc21pb.PageLayout_FullZipLayout:
		return decodeFullZip(l.FullZipLayout, src, numRows, want, r.limits)
	}
	bufs, err := allBufs(src)
	if err != nil {
		return nil, err
	}
	switch l := layout.Layout.(type) {
	case *enc21pb.PageLayout_ConstantLayout:
		return decodeConstant(l.ConstantLayout, bufs, numRows, r.limits)
	case *enc21pb.PageLayout_BlobLayout:
		return nil, unsupportedErr("blob layout is not supported")
	}
	return nil, unsupportedErr("unknown page layout (newer than this reader)")
}
