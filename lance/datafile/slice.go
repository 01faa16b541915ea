package datafile

import (
	"fmt"
)

// slice keeps rows [a, b) of a decoded page, counted from pd.firstRow, so
// that a read returns exactly the rows asked for.
func (pd *pageData) slice(a, b uint64) (*pageData, error) {
	if a == 0 && b == pd.numRows {
		// A copy: callers (appendPage) replace fields of what they get.
		out := *pd
		return &out, nil
	}
	if a > b || b > pd.numRows {
		return nil, fmt.Errorf("rows %d..%d of a %d-row page", a, b, pd.numRows)
	}
	nl, err := pd.checkedLevelCount()
	if err != nil {
		return nil, err
	}
	// Level range of the rows: a row starts at each top-level rep.
	la, lb := a, b
	if pd.rep != nil {
		maxRep := uint16(0)
		for _, l := range pd.layers {
			if isListLayer(l) {
				maxRep++
			}
		}
		la, lb = nl, nl
		row := uint64(0)
		for i, r := range pd.rep {
			if r == maxRep {
				if row == a {
					la = uint64(i)
				}
				if row == b {
					lb = uint64(i)
					break
				}
				row++
			}
		}
		if a == b {
			la = lb
		}
	} else if b > nl {
		return nil, fmt.Errorf("rows %d..%d of a page with %d levels", a, b, nl)
	}
	// Value range: the visible items before and inside the level range.
	thr := uint16(visibleThreshold(pd.layers))
	visible := func(lo, hi uint64) uint64 {
		if pd.def == nil {
			return hi - lo
		}
		var n uint64
		for _, d := range pd.def[lo:hi] {
			if d <= thr {
				n++
			}
		}
		return n
	}
	va := visible(0, la)
	vb := va + visible(la, lb)
	out := *pd
	out.firstRow, out.numRows = pd.firstRow+a, b-a
	if pd.rep != nil {
		out.rep = pd.rep[la:lb]
	}
	if pd.def != nil {
		out.def = pd.def[la:lb]
	}
	if pd.constVal != nil || pd.allNull {
		out.levels = lb - la
		return &out, nil
	}
	v, err := sliceBlock(pd.vals, va, vb)
	if err != nil {
		return nil, err
	}
	out.vals = v
	if pd.fslValidity != nil {
		vbytes := (pd.fslDim + 7) / 8
		if uint64(len(pd.fslValidity)) < vb*vbytes {
			return nil, fmt.Errorf("item validity is short")
		}
		out.fslValidity = pd.fslValidity[va*vbytes : vb*vbytes]
	}
	return &out, nil
}

// sliceBlock keeps values [a, b) of a block.
func sliceBlock(b block, a, e uint64) (block, error) {
	if a > e || e > b.n {
		return block{}, fmt.Errorf("values %d..%d of %d", a, e, b.n)
	}
	out := b
	out.n = e - a
	switch {
	case b.offsets != nil:
		out.offsets = make([]uint64, e-a+1)
		base := b.offsets[a]
		for i := range out.offsets {
			out.offsets[i] = b.offsets[a+uint64(i)] - base
		}
		out.data = b.data[base:b.offsets[e]]
	case b.data == nil:
	case b.bits%8 == 0:
		w := b.bits / 8
		out.data = b.data[a*w : e*w]
	default:
		// Sub-byte values (bools): repack from bit a.
		out.data = make([]byte, ((e-a)*b.bits+7)/8)
		for i := uint64(0); i < (e-a)*b.bits; i++ {
			q := a*b.bits + i
			if b.data[q/8]>>(q%8)&1 == 1 {
				out.data[i/8] |= 1 << (i % 8)
			}
		}
	}
	if b.itemValid != nil {
		vb := (b.dim + 7) / 8
		out.itemValid = b.itemValid[a*vb : e*vb]
	}
	return out, nil
}

// checkedLevelCount is levelCount, refusing a page whose rep and def
// levels disagree in number.
func (pd *pageData) checkedLevelCount() (uint64, error) {
	nl := pd.levelCount()
	if pd.rep != nil && uint64(len(pd.rep)) != nl {
		return 0, fmt.Errorf("page has %d rep levels and %d def levels", len(pd.rep), nl)
	}
	return nl, nil
}
