package datafile

import "fmt"

// levelCount is the number of rep/def levels (items) of a decoded page.
func (pd *pageData) levelCount() uint64 {
	switch {
	case pd.def != nil:
		return uint64(len(pd.def))
	case pd.rep != nil:
		return uint64(len(pd.rep))
	case pd.constVal != nil || pd.allNull:
		return pd.levels
	}
	return pd.vals.n
}

// rowCursor is a position at the start of a row of a decoded page: the
// row, its first level and the visible values before that level.
type rowCursor struct{ row, lvl, val uint64 }

// rowWalker moves a rowCursor forward over a page's levels, so that a
// gather visits every level at most once however many rows it takes.
type rowWalker struct {
	pd     *pageData
	nl     uint64
	maxRep uint16
	thr    uint16
}

func newRowWalker(pd *pageData) (*rowWalker, error) {
	w := &rowWalker{pd: pd, nl: pd.levelCount(), thr: uint16(visibleThreshold(pd.layers))}
	if pd.rep != nil && uint64(len(pd.rep)) != w.nl {
		return nil, fmt.Errorf("page has %d rep levels and %d def levels", len(pd.rep), w.nl)
	}
	if pd.rep == nil && w.nl != pd.numRows {
		return nil, fmt.Errorf("page of %d rows has %d levels and no repetition", pd.numRows, w.nl)
	}
	for _, l := range pd.layers {
		if isListLayer(l) {
			w.maxRep++
		}
	}
	return w, nil
}

// advance returns c moved forward n rows.
func (w *rowWalker) advance(c rowCursor, n uint64) (rowCursor, error) {
	if n > w.pd.numRows-c.row {
		return c, fmt.Errorf("row %d of a %d-row page", c.row+n, w.pd.numRows)
	}
	end := c.lvl + n
	if w.pd.rep != nil {
		// A row starts at each top-level rep; the first level is c's own.
		end = c.lvl
		for k := uint64(0); k < n; k++ {
			end++
			for end < w.nl && w.pd.rep[end] != w.maxRep {
				end++
			}
		}
		end = min(end, w.nl)
	}
	vals := end - c.lvl
	if w.pd.def != nil {
		vals = 0
		for _, d := range w.pd.def[c.lvl:end] {
			if d <= w.thr {
				vals++
			}
		}
	}
	return rowCursor{c.row + n, end, c.val + vals}, nil
}

// appendRows appends to dst the rows of src (sorted, duplicates allowed,
// counted from src's first row) in one pass over src's levels. dst takes
// src's layers; its numRows counts the rows appended.
func appendRows(dst, src *pageData, rows []uint64) error {
	w, err := newRowWalker(src)
	if err != nil {
		return err
	}
	dst.layers = src.layers
	var c rowCursor
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && rows[j] == rows[j-1]+1 {
			j++
		}
		if rows[i] < c.row {
			return fmt.Errorf("rows are not sorted at %d", rows[i])
		}
		if c, err = w.advance(c, rows[i]-c.row); err != nil {
			return err
		}
		// Leave the cursor at the run's last row: it may be taken again.
		last, err := w.advance(c, uint64(j-i-1))
		if err != nil {
			return err
		}
		end, err := w.advance(last, 1)
		if err != nil {
			return err
		}
		if err := appendSpan(dst, src, c, end); err != nil {
			return err
		}
		dst.numRows += uint64(j - i)
		c, i = last, j
	}
	return nil
}

// appendSpan appends the levels and values between cursors a and b of src
// to dst.
func appendSpan(dst, src *pageData, a, b rowCursor) error {
	if src.rep != nil {
		dst.rep = append(dst.rep, src.rep[a.lvl:b.lvl]...)
	}
	if src.def != nil {
		dst.def = append(dst.def, src.def[a.lvl:b.lvl]...)
	}
	if src.constVal != nil || src.allNull {
		dst.constVal, dst.allNull = src.constVal, src.allNull
		dst.levels += b.lvl - a.lvl
		return nil
	}
	if err := appendBlock(&dst.vals, src.vals, a.val, b.val); err != nil {
		return err
	}
	if src.fslValidity != nil {
		vb := (src.fslDim + 7) / 8
		if uint64(len(src.fslValidity)) < b.val*vb {
			return fmt.Errorf("item validity is short")
		}
		dst.fslValidity = append(dst.fslValidity, src.fslValidity[a.val*vb:b.val*vb]...)
		dst.fslDim = src.fslDim
	}
	return nil
}

// appendBlock appends values [a, e) of src to dst, which takes src's
// layout when it is still empty.
func appendBlock(dst *block, src block, a, e uint64) error {
	if a > e || e > src.n {
		return fmt.Errorf("values %d..%d of %d", a, e, src.n)
	}
	if dst.n == 0 && dst.data == nil && dst.offsets == nil {
		dst.bits, dst.dim, dst.isConst = src.bits, src.dim, src.isConst
		if src.offsets != nil {
			dst.offsets = []uint64{0}
		}
	}
	if (dst.offsets == nil) != (src.offsets == nil) || dst.bits != src.bits {
		return fmt.Errorf("chunks disagree on value layout")
	}
	switch {
	case src.offsets != nil:
		if uint64(len(src.offsets)) <= e {
			return fmt.Errorf("%d offsets for %d values", len(src.offsets), src.n)
		}
		base, lo, hi := uint64(len(dst.data)), src.offsets[a], src.offsets[e]
		if lo > hi || hi > uint64(len(src.data)) {
			return fmt.Errorf("values %d..%d at bytes %d..%d of %d", a, e, lo, hi, len(src.data))
		}
		dst.data = append(dst.data, src.data[lo:hi]...)
		for _, o := range src.offsets[a+1 : e+1] {
			dst.offsets = append(dst.offsets, base+o-lo)
		}
	case src.data == nil:
	case src.bits%8 == 0:
		w := src.bits / 8
		if uint64(len(src.data)) < e*w {
			return fmt.Errorf("%d values of %d bytes in %d bytes", e, w, len(src.data))
		}
		dst.data = append(dst.data, src.data[a*w:e*w]...)
	default:
		// Sub-byte values (bools) are packed: copy bit by bit.
		if uint64(len(src.data))*8 < e*src.bits {
			return fmt.Errorf("%d values of %d bits in %d bytes", e, src.bits, len(src.data))
		}
		pos := dst.n * dst.bits
		need := (pos + (e-a)*src.bits + 7) / 8
		for uint64(len(dst.data)) < need {
			dst.data = append(dst.data, 0)
		}
		for i := uint64(0); i < (e-a)*src.bits; i++ {
			q := a*src.bits + i
			if src.data[q/8]>>(q%8)&1 == 1 {
				dst.data[(pos+i)/8] |= 1 << ((pos + i) % 8)
			}
		}
	}
	if src.itemValid != nil {
		vb := (src.dim + 7) / 8
		if uint64(len(src.itemValid)) < e*vb {
			return fmt.Errorf("item validity is short")
		}
		dst.itemValid = append(dst.itemValid, src.itemValid[a*vb:e*vb]...)
	}
	dst.n += e - a
	return nil
}
