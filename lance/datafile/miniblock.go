package datafile

import (
	"encoding/binary"
	"fmt"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// pageData is one decoded 2.1+ page: rep/def levels (nil when the page has
// none) and the visible values.
type pageData struct {
	rep, def []uint16
	vals     block
	// fslValidity holds per-item validity bits of fixed-size-list values
	// (full-zip FSL with has_validity), dim bits per value, LSB first.
	fslValidity []byte
	fslDim      uint64
	layers      []enc21pb.RepDefLayer
	// constVal, on constant pages, is the value every visible item takes.
	constVal *block
	// allNull pages have no values at all: visible items are null.
	allNull bool
	// levels is the number of items of a page with neither rep nor def
	// levels when vals does not say it (constant pages).
	levels uint64
	// firstRow is the page-local row the decoded levels start at, numRows
	// how many rows they cover.
	firstRow uint64
	numRows  uint64
}

// decodeMiniBlock decodes a mini-block page. want is the page-local row
// range the caller needs: without repetition a chunk's values are rows, so
// only the chunks overlapping want are read and decoded (pd.firstRow says
// where they start); with repetition the whole page is decoded.
func decodeMiniBlock(l *enc21pb.MiniBlockLayout, src bufSource, numRows uint64, want rowRange, lim limits) (*pageData, error) {
	if err := checkMiniBlock(l, src, lim); err != nil {
		return nil, err
	}
	chunks, wordSize, err := parseChunks(l, src)
	if err != nil {
		return nil, err
	}
	nChunks := len(chunks)
	pd := &pageData{layers: l.Layers, numRows: numRows}
	lo, hi := 0, nChunks
	if l.RepCompression == nil {
		if l.NumItems != numRows {
			return nil, fmt.Errorf("page of %d rows has %d values and no repetition", numRows, l.NumItems)
		}
		for lo < hi && chunks[lo].first+chunks[lo].count <= want.lo {
			lo++
		}
		for hi > lo && chunks[hi-1].first >= want.hi {
			hi--
		}
		if lo < hi {
			pd.firstRow = chunks[lo].first
			pd.numRows = chunks[hi-1].first + chunks[hi-1].count - pd.firstRow
		} else {
			pd.numRows = 0
		}
	}
	var data []byte
	if lo < hi {
		base := chunks[lo].off
		if data, err = src.part(1, base, chunks[hi-1].off+chunks[hi-1].size-base); err != nil {
			return nil, err
		}
	}
	vals := make([]block, 0, hi-lo)
	var nvals uint64
	// Plainly bitpacked values of rows (no repetition: a chunk's values
	// are its rows) unpack straight into one buffer, chunk after chunk:
	// no per-chunk buffers, no concatenation.
	var all []byte
	var width uint64
	if bits := bitpackedBits(l.ValueCompression); bits > 0 && l.RepCompression == nil && lo < hi {
		n := pd.numRows
		if n <= lim.maxItems {
			width = bits / 8
			all = make([]byte, intoLen(n, bits)+flChunk*width)
		}
	}
	for c := lo; c < hi; c++ {
		ch := chunks[c]
		b := data[ch.off-chunks[lo].off : ch.off-chunks[lo].off+ch.size]
		var into []byte
		if all != nil {
			into = all[nvals*width:]
		}
		rep, def, v, err := decodeChunk(l, l.ValueCompression, b, ch.count, wordSize, lim, into)
		if err != nil {
			return nil, fmt.Errorf("chunk %d: %w", c, err)
		}
		pd.rep = append(pd.rep, rep...)
		pd.def = append(pd.def, def...)
		if all != nil && (v.offsets != nil || v.bits != width*8 || v.n != ch.count || len(v.data) == 0 || &v.data[0] != &into[0]) {
			all = nil // not unpacked in place after all: concatenate
		}
		vals = append(vals, v)
		nvals += ch.count
	}
	var v block
	if all != nil {
		v = block{n: nvals, bits: width * 8, data: all[:nvals*width]}
	} else if v, err = concatBlocks(vals, nvals); err != nil {
		return nil, err
	}
	if l.Dictionary != nil && v.n > 0 {
		dict, err := loadDictionary(l, src, lim)
		if err != nil {
			return nil, err
		}
		if v, err = undictionary(v, dict, lim); err != nil {
			return nil, err
		}
	}
	pd.vals = v
	pd.fslValidity, pd.fslDim = v.itemValid, v.dim
	if l.RepCompression == nil {
		pd.rep = nil
	}
	if l.DefCompression == nil {
		pd.def = nil
	}
	return pd, nil
}

// checkMiniBlock checks a mini-block page's buffer count and bounds.
func checkMiniBlock(l *enc21pb.MiniBlockLayout, src bufSource, lim limits) error {
	need := 2
	if l.Dictionary != nil {
		need++
	}
	if l.RepetitionIndexDepth > 0 {
		need++
	}
	if src.count() != need {
		return fmt.Errorf("mini-block page has %d buffers, want %d", src.count(), need)
	}
	if l.NumBuffers == 0 || l.NumBuffers > 16 {
		return fmt.Errorf("mini-block page has %d value buffers per chunk", l.NumBuffers)
	}
	if l.NumItems > lim.maxItems {
		return fmt.Errorf("mini-block page claims %d items", l.NumItems)
	}
	return nil
}

// decodeChunk splits one chunk into its rep, def and value buffers and
// decompresses them, the values with venc (the layout's value compression,
// or the part of it a take applies to the chunk before gathering rows).
// Plain bitpacked values are unpacked into into when it is long enough
// (intoLen says how long it must be), so a caller can decode many chunks
// into one buffer or reuse one; otherwise the block has its own memory.
func decodeChunk(l *enc21pb.MiniBlockLayout, venc *enc21pb.CompressiveEncoding, b []byte, count uint64, wordSize int, lim limits, into []byte) ([]uint16, []uint16, block, error) {
	pos := 0
	u16 := func() (uint64, error) {
		if pos+2 > len(b) {
			return 0, fmt.Errorf("chunk header is past the %d-byte chunk", len(b))
		}
		v := binary.LittleEndian.Uint16(b[pos:])
		pos += 2
		return uint64(v), nil
	}
	numLevels, err := u16()
	if err != nil {
		return nil, nil, block{}, err
	}
	var repSize, defSize uint64
	if l.RepCompression != nil {
		if repSize, err = u16(); err != nil {
			return nil, nil, block{}, err
		}
	}
	if l.DefCompression != nil {
		if defSize, err = u16(); err != nil {
			return nil, nil, block{}, err
		}
	}
	sizes := make([]uint64, l.NumBuffers)
	for i := range sizes {
		if wordSize == 2 {
			sizes[i], err = u16()
		} else {
			if pos+4 > len(b) {
				return nil, nil, block{}, fmt.Errorf("chunk header is past the %d-byte chunk", len(b))
			}
			sizes[i] = uint64(binary.LittleEndian.Uint32(b[pos:]))
			pos += 4
		}
		if err != nil {
			return nil, nil, block{}, err
		}
	}
	take := func(n uint64) ([]byte, error) {
		pos = (pos + 7) &^ 7
		if uint64(pos)+n > uint64(len(b)) {
			return nil, fmt.Errorf("chunk buffer of %d bytes at %d is past the %d-byte chunk", n, pos, len(b))
		}
		out := b[pos : pos+int(n)]
		pos += int(n)
		return out, nil
	}
	var rep, def []uint16
	if l.RepCompression != nil {
		rb, err := take(repSize)
		if err != nil {
			return nil, nil, block{}, err
		}
		blk, err := decodeComp(l.RepCompression, [][]byte{rb}, numLevels, false, lim)
		if err != nil {
			return nil, nil, block{}, fmt.Errorf("rep levels: %w", err)
		}
		if rep, err = levels(blk); err != nil {
			return nil, nil, block{}, fmt.Errorf("rep levels: %w", err)
		}
	}
	if l.DefCompression != nil {
		db, err := take(defSize)
		if err != nil {
			return nil, nil, block{}, err
		}
		blk, err := decodeComp(l.DefCompression, [][]byte{db}, numLevels, false, lim)
		if err != nil {
			return nil, nil, block{}, fmt.Errorf("def levels: %w", err)
		}
		if def, err = levels(blk); err != nil {
			return nil, nil, block{}, fmt.Errorf("def levels: %w", err)
		}
	}
	vb := make([][]byte, len(sizes))
	for i, s := range sizes {
		if vb[i], err = take(s); err != nil {
			return nil, nil, block{}, err
		}
	}
	var v block
	if ib := venc.GetInlineBitpacking(); ib != nil && ib.Values == nil && len(vb) == 1 && count <= lim.maxItems && uint64(len(into)) >= intoLen(count, ib.UncompressedBitsPerValue) {
		v, err = inlineBitpackedInto(vb[0], count, ib.UncompressedBitsPerValue, into)
	} else {
		v, err = decodeComp(venc, vb, count, true, lim)
	}
	if err != nil {
		return nil, nil, block{}, fmt.Errorf("values: %w", err)
	}
	return rep, def, v, nil
}

// intoLen is the buffer decodeChunk needs to unpack n bitpacked values of
// bits each in place: whole FastLanes chunks.
func intoLen(n, bits uint64) uint64 {
	return (n + flChunk - 1) / flChunk * flChunk * bits / 8
}

// bitpackedBits is the value width of a layout's values when they are
// plainly bitpacked (what decodeChunk unpacks in place), else 0.
func bitpackedBits(venc *enc21pb.CompressiveEncoding) uint64 {
	if ib := venc.GetInlineBitpacking(); ib != nil && ib.Values == nil && checkWordBits(ib.UncompressedBitsPerValue) == nil {
		return ib.UncompressedBitsPerValue
	}
	return 0
}

// concatBlocks joins per-chunk blocks into one.
func concatBlocks(bs []block, n uint64) (block, error) {
	if len(bs) == 0 {
		return block{n: 0}, nil
	}
	if len(bs) == 1 {
		return bs[0], nil
	}
	out := block{n: n, bits: bs[0].bits, dim: bs[0].dim}
	if bs[0].itemValid != nil {
		for _, b := range bs {
			if b.itemValid == nil {
				return block{}, fmt.Errorf("chunks disagree on item validity")
			}
			out.itemValid = append(out.itemValid, b.itemValid...)
		}
	}
	if bs[0].offsets == nil {
		if out.bits%8 != 0 {
			// Sub-byte values (bool) are packed per chunk; repack bit by bit.
			out.data = make([]byte, (n*out.bits+7)/8)
			var pos uint64
			for _, b := range bs {
				if b.bits != out.bits || b.offsets != nil {
					return block{}, fmt.Errorf("chunks disagree on value layout")
				}
				for i := uint64(0); i < b.n*b.bits; i++ {
					if b.data[i/8]>>(i%8)&1 == 1 {
						out.data[(pos+i)/8] |= 1 << ((pos + i) % 8)
					}
				}
				pos += b.n * b.bits
			}
			return out, nil
		}
		size := 0
		for _, b := range bs {
			size += len(b.data)
		}
		out.data = make([]byte, 0, size)
		for _, b := range bs {
			if b.bits != out.bits || b.offsets != nil {
				return block{}, fmt.Errorf("chunks disagree on value layout")
			}
			out.data = append(out.data, b.data...)
		}
		return out, nil
	}
	size := 0
	for _, b := range bs {
		size += len(b.data)
	}
	out.data = make([]byte, 0, size)
	out.offsets = make([]uint64, 1, n+1)
	for _, b := range bs {
		if b.offsets == nil {
			return block{}, fmt.Errorf("chunks disagree on value layout")
		}
		base := uint64(len(out.data))
		out.data = append(out.data, b.data...)
		for _, o := range b.offsets[1:] {
			out.offsets = append(out.offsets, base+o)
		}
	}
	return out, nil
}

// undictionary replaces integer indices by the dictionary's values.
func undictionary(idx, dict block, lim limits) (block, error) {
	if idx.offsets != nil || (idx.bits != 8 && idx.bits != 16 && idx.bits != 32 && idx.bits != 64) {
		return block{}, unsupportedErr("dictionary indices of %d bits are not supported", idx.bits)
	}
	sz := idx.bits / 8
	if uint64(len(idx.data)) < idx.n*sz {
		return block{}, fmt.Errorf("dictionary indices: %d bytes for %d values", len(idx.data), idx.n)
	}
	var get func(i uint64) uint64
	switch sz {
	case 1:
		get = func(i uint64) uint64 { return uint64(idx.data[i]) }
	case 2:
		get = func(i uint64) uint64 { return uint64(binary.LittleEndian.Uint16(idx.data[2*i:])) }
	case 4:
		get = func(i uint64) uint64 { return uint64(binary.LittleEndian.Uint32(idx.data[4*i:])) }
	default:
		get = func(i uint64) uint64 { return binary.LittleEndian.Uint64(idx.data[8*i:]) }
	}
	out := block{n: idx.n, bits: dict.bits}
	if dict.offsets != nil {
		// Sized first, so the values are copied once.
		var total uint64
		for i := uint64(0); i < idx.n; i++ {
			j := get(i)
			if j >= dict.n {
				return block{}, fmt.Errorf("dictionary index %d of value %d is past the %d items", j, i, dict.n)
			}
			if total += uint64(len(dict.value(j))); total > lim.maxBytes {
				return block{}, fmt.Errorf("dictionary values expand past %d bytes", lim.maxBytes)
			}
		}
		out.offsets = make([]uint64, 1, idx.n+1)
		out.data = make([]byte, 0, total)
		for i := uint64(0); i < idx.n; i++ {
			out.data = append(out.data, dict.value(get(i))...)
			out.offsets = append(out.offsets, uint64(len(out.data)))
		}
		return out, nil
	}
	if dict.bits%8 != 0 {
		return block{}, unsupportedErr("dictionary of %d-bit values is not supported", dict.bits)
	}
	w := dict.bits / 8
	out.data = make([]byte, idx.n*w)
	for i := uint64(0); i < idx.n; i++ {
		j := get(i)
		if j >= dict.n {
			return block{}, fmt.Errorf("dictionary index %d of value %d is past the %d items", j, i, dict.n)
		}
		copy(out.data[i*w:], dict.data[j*w:(j+1)*w])
	}
	return out, nil
}
