package datafile

import (
	"fmt"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// fullZipGap is the largest row gap within which a take reads a full-zip
// page's rows in one range rather than seeking again: a few skipped rows
// cost less than another read.
const fullZipGap = 8

// repIndexBytesPerRange is how many bytes of a full-zip repetition index a
// take reads whole rather than make one more pair of reads for a range.
const repIndexBytesPerRange = 512

// takePage decodes rows (page-local, sorted, duplicates allowed) of page p
// of column c, reading and decoding each byte at most once: flat mini-block
// pages decode only the chunks holding the rows, full-zip pages read only
// the ranges around them, and pages that cannot be read in part (repeated
// mini-block, constant) are decoded whole, once. The result holds exactly
// the rows, in order.
func (r *Reader) takePage(c, p int, rows []uint64) (*pageData, error) {
	layout, src, err := r.pageLayout(c, p)
	if err != nil {
		return nil, err
	}
	numRows := r.cols[c].Pages[p].Length
	if len(rows) > 0 && rows[len(rows)-1] >= numRows {
		return nil, fmt.Errorf("row %d of a %d-row page", rows[len(rows)-1], numRows)
	}
	switch l := layout.Layout.(type) {
	case *enc21pb.PageLayout_MiniBlockLayout:
		if l.MiniBlockLayout.RepCompression == nil {
			return takeMiniBlock(l.MiniBlockLayout, src, numRows, rows, r.limits)
		}
	case *enc21pb.PageLayout_FullZipLayout:
		return takeFullZip(l.FullZipLayout, src, numRows, rows, r.limits)
	}
	pd, err := r.decodeLayout(layout, src, numRows, rowRange{0, numRows})
	if err != nil {
		return nil, err
	}
	out := &pageData{}
	if err := appendRows(out, pd, rows); err != nil {
		return nil, err
	}
	return out, nil
}

// takeFullZip reads the rows of a full-zip page in ranges of nearby rows;
// a page that cannot seek decodes whole on the first range and serves the
// rest.
func takeFullZip(l *enc21pb.FullZipLayout, src bufSource, numRows uint64, rows []uint64, lim limits) (*pageData, error) {
	out := &pageData{}
	if src.count() == 2 {
		// Each range reads two repetition index entries; when the ranges
		// are many, reading the index once costs less.
		ranges := uint64(1)
		for i := 1; i < len(rows); i++ {
			if rows[i]-rows[i-1] > fullZipGap {
				ranges++
			}
		}
		if ranges*repIndexBytesPerRange >= src.size(1) {
			idx, err := src.all(1)
			if err != nil {
				return nil, err
			}
			src = heldBuf{src, 1, idx}
		}
	}
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && rows[j]-rows[j-1] <= fullZipGap {
			j++
		}
		pd, err := decodeFullZip(l, src, numRows, rowRange{rows[i], rows[j-1] + 1}, lim)
		if err != nil {
			return nil, err
		}
		if pd.firstRow == 0 && pd.numRows == numRows {
			j = len(rows)
		}
		if pd.firstRow > rows[i] || rows[j-1]-pd.firstRow >= pd.numRows {
			return nil, fmt.Errorf("rows %d..%d decoded for rows %d..%d", pd.firstRow, pd.firstRow+pd.numRows, rows[i], rows[j-1]+1)
		}
		local := make([]uint64, j-i)
		for k := range local {
			local[k] = rows[i+k] - pd.firstRow
		}
		if err := appendRows(out, pd, local); err != nil {
			return nil, err
		}
		i = j
	}
	return out, nil
}

// heldBuf is a bufSource with buffer i already in memory.
type heldBuf struct {
	bufSource
	i int
	b []byte
}

func (h heldBuf) all(i int) ([]byte, error) {
	if i == h.i {
		return h.b, nil
	}
	return h.bufSource.all(i)
}

func (h heldBuf) part(i int, off, n uint64) ([]byte, error) {
	if i != h.i {
		return h.bufSource.part(i, off, n)
	}
	if off > uint64(len(h.b)) || n > uint64(len(h.b))-off {
		return nil, fmt.Errorf("buffer %d range %d+%d is past its %d bytes", i, off, n, len(h.b))
	}
	return h.b[off : off+n], nil
}
