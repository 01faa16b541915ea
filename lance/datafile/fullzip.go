package datafile

import (
	"encoding/binary"
	"fmt"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// decodeFullZip decodes a full-zip page: per item a control word (rep in
// the high bits, def in the low bits_def bits) and, for visible items, the
// value. Only the rows of want (page-local) are read when the page allows
// seeking: fixed-width values without repetition have a fixed stride, and
// the repetition index (buffer 1) gives each row's byte offset.
func decodeFullZip(l *enc21pb.FullZipLayout, src bufSource, numRows uint64, want rowRange, lim limits) (*pageData, error) {
	if src.count() < 1 || src.count() > 2 {
		return nil, fmt.Errorf("full-zip page has %d buffers, want 1 or 2", src.count())
	}
	if l.BitsRep > 16 || l.BitsDef > 16 {
		return nil, fmt.Errorf("full-zip control word of %d rep + %d def bits", l.BitsRep, l.BitsDef)
	}
	n := uint64(l.NumItems)
	if n > lim.maxItems || uint64(l.NumVisibleItems) > n {
		return nil, fmt.Errorf("full-zip page claims %d items, %d visible", n, l.NumVisibleItems)
	}
	ctrl := 0
	switch tb := l.BitsRep + l.BitsDef; {
	case tb == 0:
	case tb <= 8:
		ctrl = 1
	case tb <= 16:
		ctrl = 2
	default:
		ctrl = 4
	}
	if want.lo > want.hi || want.hi > numRows {
		return nil, fmt.Errorf("rows %d..%d of a %d-row page", want.lo, want.hi, numRows)
	}
	// Choose the byte range to read.
	var b []byte
	var err error
	partial := false
	firstRow := uint64(0)
	switch {
	case l.BitsRep == 0 && l.GetBitsPerValue() > 0 && l.GetBitsPerValue()%8 == 0:
		if n != numRows {
			return nil, fmt.Errorf("page of %d rows has %d items and no repetition", numRows, n)
		}
		stride := uint64(ctrl) + uint64(l.GetBitsPerValue())/8
		if n > src.size(0)/stride {
			return nil, fmt.Errorf("%d items of %d bytes exceed the %d-byte page", n, stride, src.size(0))
		}
		if b, err = src.part(0, want.lo*stride, (want.hi-want.lo)*stride); err != nil {
			return nil, err
		}
		n, partial, firstRow, numRows = want.hi-want.lo, true, want.lo, want.hi-want.lo
	case src.count() == 2:
		lo, hi, err := repIndexRange(src, numRows, want)
		if err != nil {
			return nil, fmt.Errorf("repetition index: %w", err)
		}
		if b, err = src.part(0, lo, hi-lo); err != nil {
			return nil, err
		}
		partial, firstRow, numRows = true, want.lo, want.hi-want.lo
	default:
		if b, err = src.all(0); err != nil {
			return nil, err
		}
	}
	thr := visibleThreshold(l.Layers)
	pd := &pageData{layers: l.Layers, numRows: numRows}
	if l.BitsRep > 0 {
		pd.rep = make([]uint16, 0, n)
	}
	if l.BitsDef > 0 {
		pd.def = make([]uint16, 0, n)
	}
	pd.firstRow = firstRow
	pos := uint64(0)
	// vis bounds the visible values: the layout's count for a whole page,
	// the byte range for a partial read (every value takes a byte or more).
	vis := uint64(l.NumVisibleItems)
	if partial {
		vis = min(vis, uint64(len(b)))
	}

	// Work out the per-value reader.
	var fixedBytes uint64
	var fsl *enc21pb.FixedSizeList
	var fsst *fsstDecoder
	var gen *enc21pb.BufferCompression
	switch d := l.Details.(type) {
	case *enc21pb.FullZipLayout_BitsPerValue:
		if d.BitsPerValue%8 != 0 || d.BitsPerValue == 0 {
			return nil, fmt.Errorf("full-zip values of %d bits", d.BitsPerValue)
		}
		fixedBytes = uint64(d.BitsPerValue) / 8
		switch e := l.ValueCompression.GetCompression().(type) {
		case *enc21pb.CompressiveEncoding_Flat:
			if e.Flat.BitsPerValue != uint64(d.BitsPerValue) || e.Flat.Data != nil {
				return nil, fmt.Errorf("full-zip flat of %d bits in %d-bit slots", e.Flat.BitsPerValue, d.BitsPerValue)
			}
		case *enc21pb.CompressiveEncoding_FixedSizeList:
			fsl = e.FixedSizeList
			inner := fsl.GetValues().GetFlat()
			if inner == nil || inner.Data != nil || inner.BitsPerValue%8 != 0 || fsl.ItemsPerValue == 0 || fsl.ItemsPerValue > 1<<20 {
				return nil, unsupportedErr("full-zip fixed-size list over %v is not supported", fsl.GetValues())
			}
			want := fsl.ItemsPerValue * inner.BitsPerValue
			if fsl.HasValidity {
				want += (fsl.ItemsPerValue + 7) / 8 * 8
			}
			if want != uint64(d.BitsPerValue) {
				return nil, fmt.Errorf("full-zip fixed-size list of %d x %d bits (validity %v) in %d-bit slots", fsl.ItemsPerValue, inner.BitsPerValue, fsl.HasValidity, d.BitsPerValue)
			}
		default:
			return nil, unsupportedErr("full-zip fixed-width compression %T is not supported", e)
		}
	case *enc21pb.FullZipLayout_BitsPerOffset:
		if d.BitsPerOffset != 32 && d.BitsPerOffset != 64 {
			return nil, fmt.Errorf("full-zip lengths of %d bits", d.BitsPerOffset)
		}
		enc := l.ValueCompression
		if g := enc.GetGeneral(); g != nil {
			gen, enc = g.Compression, g.Values
		}
		if f := enc.GetFsst(); f != nil {
			var err error
			if fsst, err = newFSST(f.SymbolTable); err != nil {
				return nil, err
			}
			enc = f.Values
		}
		if enc.GetVariable() == nil {
			return nil, unsupportedErr("full-zip variable compression %v is not supported", l.ValueCompression)
		}
	default:
		return nil, fmt.Errorf("full-zip layout has no value width")
	}
	var vals block
	var validity []byte
	var itemBytes, vbytes uint64
	if fixedBytes > 0 {
		if partial {
			vis = min(vis, uint64(len(b))/fixedBytes)
		}
		if vis > uint64(len(b))/fixedBytes+1 {
			return nil, fmt.Errorf("%d visible values of %d bytes exceed the %d-byte page", vis, fixedBytes, len(b))
		}
		vals = block{bits: fixedBytes * 8}
		if fsl != nil {
			itemBytes = fsl.GetValues().GetFlat().BitsPerValue / 8
			vals.bits = fsl.ItemsPerValue * itemBytes * 8
			if fsl.HasValidity {
				vbytes = (fsl.ItemsPerValue + 7) / 8
			}
			pd.fslDim = fsl.ItemsPerValue
		}
		vals.data = make([]byte, 0, vis*vals.bits/8)
	} else {
		vals.offsets = make([]uint64, 1, min(vis, 1<<16)+1)
	}
	offBytes := uint64(4)
	if l.GetBitsPerOffset() == 64 {
		offBytes = 8
	}
	// A partial read consumes its byte range; a whole page its items.
	for i := uint64(0); partial && pos < uint64(len(b)) || !partial && i < n; i++ {
		if i >= lim.maxItems {
			return nil, fmt.Errorf("full-zip page holds more than %d items", lim.maxItems)
		}
		if pos+uint64(ctrl) > uint64(len(b)) {
			return nil, fmt.Errorf("item %d control word is past the %d-byte page", i, len(b))
		}
		var cw uint32
		switch ctrl {
		case 1:
			cw = uint32(b[pos])
		case 2:
			cw = uint32(binary.LittleEndian.Uint16(b[pos:]))
		case 4:
			cw = binary.LittleEndian.Uint32(b[pos:])
		}
		pos += uint64(ctrl)
		def := uint16(cw & (1<<l.BitsDef - 1))
		rep := uint16(cw >> l.BitsDef)
		if pd.rep != nil {
			pd.rep = append(pd.rep, rep)
		}
		if pd.def != nil {
			pd.def = append(pd.def, def)
		}
		if int(def) > thr {
			continue
		}
		if vals.n >= vis {
			return nil, fmt.Errorf("more than the %d visible values the page declares", vis)
		}
		vals.n++
		if fixedBytes > 0 {
			if pos+fixedBytes > uint64(len(b)) {
				return nil, fmt.Errorf("value %d is past the %d-byte page", vals.n-1, len(b))
			}
			v := b[pos : pos+fixedBytes]
			pos += fixedBytes
			if vbytes > 0 {
				validity = append(validity, v[:vbytes]...)
				v = v[vbytes:]
			}
			vals.data = append(vals.data, v...)
			continue
		}
		if def != 0 {
			// A null variable-width item has only its control word.
			vals.offsets = append(vals.offsets, uint64(len(vals.data)))
			continue
		}
		if pos+offBytes > uint64(len(b)) {
			return nil, fmt.Errorf("value %d length is past the %d-byte page", vals.n-1, len(b))
		}
		var ln uint64
		if offBytes == 4 {
			ln = uint64(binary.LittleEndian.Uint32(b[pos:]))
		} else {
			ln = binary.LittleEndian.Uint64(b[pos:])
		}
		pos += offBytes
		if ln > uint64(len(b))-pos {
			return nil, fmt.Errorf("value %d of %d bytes is past the %d-byte page", vals.n-1, ln, len(b))
		}
		v := b[pos : pos+ln]
		pos += ln
		if gen != nil {
			var err error
			if v, err = general(gen, v); err != nil {
				return nil, fmt.Errorf("value %d: %w", vals.n-1, err)
			}
		}
		if fsst != nil {
			var err error
			if vals.data, err = fsst.appendDecoded(vals.data, v); err != nil {
				return nil, fmt.Errorf("value %d: %w", vals.n-1, err)
			}
		} else {
			vals.data = append(vals.data, v...)
		}
		vals.offsets = append(vals.offsets, uint64(len(vals.data)))
	}
	if !partial && vals.n != vis {
		return nil, fmt.Errorf("page has %d visible values, layout says %d", vals.n, vis)
	}
	pd.vals = vals
	if fsl != nil && fsl.HasValidity {
		pd.fslValidity = validity
	}
	return pd, nil
}

// layerCodes is the number of def codes a layer uses.
func layerCodes(l enc21pb.RepDefLayer) int {
	switch l {
	case enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM, enc21pb.RepDefLayer_REPDEF_NULLABLE_LIST, enc21pb.RepDefLayer_REPDEF_EMPTYABLE_LIST:
		return 1
	case enc21pb.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST:
		return 2
	}
	return 0
}

func isListLayer(l enc21pb.RepDefLayer) bool {
	switch l {
	case enc21pb.RepDefLayer_REPDEF_ALL_VALID_LIST, enc21pb.RepDefLayer_REPDEF_NULLABLE_LIST,
		enc21pb.RepDefLayer_REPDEF_EMPTYABLE_LIST, enc21pb.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST:
		return true
	}
	return false
}

// visibleThreshold is the largest def level that still has a value: the
// codes of the item layers inside the inner-most list.
func visibleThreshold(layers []enc21pb.RepDefLayer) int {
	t := 0
	for _, l := range layers {
		if isListLayer(l) {
			break
		}
		t += layerCodes(l)
	}
	return t
}

// repIndexRange reads the byte offsets of rows want.lo and want.hi from a
// full-zip repetition index: rows+1 little-endian offsets of 1, 2, 4 or 8
// bytes each.
func repIndexRange(src bufSource, rows uint64, want rowRange) (uint64, uint64, error) {
	size := src.size(1)
	if size%(rows+1) != 0 {
		return 0, 0, fmt.Errorf("%d bytes for %d rows", size, rows)
	}
	w := size / (rows + 1)
	if w != 1 && w != 2 && w != 4 && w != 8 {
		return 0, 0, fmt.Errorf("%d-byte entries", w)
	}
	read := func(i uint64) (uint64, error) {
		e, err := src.part(1, i*w, w)
		if err != nil {
			return 0, err
		}
		var v uint64
		for k := uint64(0); k < w; k++ {
			v |= uint64(e[k]) << (8 * k)
		}
		return v, nil
	}
	lo, err := read(want.lo)
	if err != nil {
		return 0, 0, err
	}
	hi, err := read(want.hi)
	if err != nil {
		return 0, 0, err
	}
	if lo > hi || hi > src.size(0) {
		return 0, 0, fmt.Errorf("rows %d..%d at bytes %d..%d of a %d-byte page", want.lo, want.hi, lo, hi, src.size(0))
	}
	return lo, hi, nil
}
