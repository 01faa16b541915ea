package datafile

import (
	"fmt"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// chunkReadGap is the largest run of unwanted bytes a take reads through to
// join two wanted chunks into one read: skipping a few KB costs more in
// calls than in bytes.
const chunkReadGap = 4 << 10

// takeMiniBlock decodes rows (page-local, sorted, duplicates allowed) of a
// mini-block page without repetition, where a chunk's values are rows. The
// chunk metadata and the dictionary are read once, the chunks holding the
// rows are read with neighbours joined into one read (the whole buffer when
// they cover most of it), each is decoded once, and only the rows are kept;
// FSST codes and dictionary indices are resolved after that, for the kept
// rows only.
func takeMiniBlock(l *enc21pb.MiniBlockLayout, src bufSource, numRows uint64, rows []uint64, lim limits) (*pageData, error) {
	chunks, wordSize, err := flatChunks(l, src, numRows, lim)
	if err != nil {
		return nil, err
	}
	// The chunks holding rows, with the rows of each.
	type want struct {
		chunk int
		rows  []uint64 // chunk-local
	}
	var wants []want
	var wantBytes uint64
	for i, c := 0, 0; i < len(rows); {
		for c < len(chunks) && chunks[c].first+chunks[c].count <= rows[i] {
			c++
		}
		if c == len(chunks) {
			return nil, fmt.Errorf("row %d is past the page's chunks", rows[i])
		}
		j := i
		for j < len(rows) && rows[j] < chunks[c].first+chunks[c].count {
			j++
		}
		local := make([]uint64, j-i)
		for k := range local {
			local[k] = rows[i+k] - chunks[c].first
		}
		wants = append(wants, want{c, local})
		wantBytes += chunks[c].size
		i = j
	}
	ids := make([]int, len(wants))
	for i, w := range wants {
		ids[i] = w.chunk
	}
	data, err := readChunks(src, chunks, ids, wantBytes)
	if err != nil {
		return nil, err
	}
	// FSST codes values one by one with the page's symbol table, so only
	// the kept values are expanded, after the gather.
	venc := l.ValueCompression
	var fsst *fsstDecoder
	if f := venc.GetFsst(); f != nil {
		if fsst, err = newFSST(f.SymbolTable); err != nil {
			return nil, err
		}
		venc = f.Values
	}
	out := &pageData{}
	// Plainly bitpacked chunks unpack into one scratch buffer, reused:
	// only the gathered rows are kept (copied out).
	var scratch []byte
	if bits := bitpackedBits(venc); bits > 0 {
		var most uint64
		for _, w := range wants {
			most = max(most, chunks[w.chunk].count)
		}
		if most <= lim.maxItems {
			scratch = make([]byte, intoLen(most, bits))
		}
	}
	for i, w := range wants {
		ch := chunks[w.chunk]
		if ok, err := takeDirect(l, venc, data[i], ch.count, wordSize, w.rows, &out.vals, len(rows)); err != nil {
			return nil, fmt.Errorf("chunk %d: %w", w.chunk, err)
		} else if ok {
			out.layers = l.Layers
			out.numRows += uint64(len(w.rows))
			data[i] = nil
			continue
		}
		_, def, v, err := decodeChunk(l, venc, data[i], ch.count, wordSize, lim, scratch)
		if err != nil {
			return nil, fmt.Errorf("chunk %d: %w", w.chunk, err)
		}
		if l.DefCompression == nil {
			def = nil
		}
		if def == nil && gatherable(v, ch.count) {
			// All-valid flat values: rows are values, gathered directly.
			if out.vals.n == 0 && out.vals.data == nil && out.vals.offsets == nil {
				out.layers = l.Layers
				out.vals = block{bits: v.bits, dim: v.dim}
				if v.offsets != nil {
					out.vals.offsets = make([]uint64, 1, len(rows)+1)
				} else {
					out.vals.data = make([]byte, 0, uint64(len(rows))*v.bits/8)
				}
			}
			if err := gatherFlat(&out.vals, v, w.rows); err != nil {
				return nil, fmt.Errorf("chunk %d: %w", w.chunk, err)
			}
			out.numRows += uint64(len(w.rows))
			data[i] = nil
			continue
		}
		cpd := &pageData{def: def, vals: v, layers: l.Layers, numRows: ch.count}
		if err := appendRows(out, cpd, w.rows); err != nil {
			return nil, fmt.Errorf("chunk %d: %w", w.chunk, err)
		}
		data[i] = nil
	}
	if fsst != nil && out.vals.n > 0 {
		if out.vals, err = fsstExpand(fsst, out.vals, lim); err != nil {
			return nil, err
		}
	}
	if l.Dictionary != nil && out.vals.n > 0 {
		dict, err := loadDictionary(l, src, lim)
		if err != nil {
			return nil, err
		}
		if out.vals, err = undictionary(out.vals, dict, lim); err != nil {
			return nil, err
		}
	}
	out.fslValidity, out.fslDim = out.vals.itemValid, out.vals.dim
	return out, nil
}

// gatherable reports whether a chunk's n decoded values can be gathered
// by gatherFlat: whole-byte fixed-width or variable-width values, no
// constant, no item validity. A take uses one way for all of a page's
// chunks, which all decode alike.
func gatherable(v block, n uint64) bool {
	if v.isConst || v.itemValid != nil || v.n != n {
		return false
	}
	if v.offsets != nil {
		return uint64(len(v.offsets)) == n+1
	}
	return v.bits > 0 && v.bits%8 == 0 && uint64(len(v.data)) >= n*v.bits/8
}

// gatherFlat appends the values of src at rows (ascending, below src.n)
// to dst, which has src's layout.
func gatherFlat(dst *block, src block, rows []uint64) error {
	if (dst.offsets == nil) != (src.offsets == nil) || dst.bits != src.bits {
		return fmt.Errorf("chunks disagree on value layout")
	}
	if len(rows) > 0 && rows[len(rows)-1] >= src.n {
		return fmt.Errorf("row %d of a %d-value chunk", rows[len(rows)-1], src.n)
	}
	if src.offsets != nil {
		for _, r := range rows {
			lo, hi := src.offsets[r], src.offsets[r+1]
			if lo > hi || hi > uint64(len(src.data)) {
				return fmt.Errorf("value %d at bytes %d..%d of %d", r, lo, hi, len(src.data))
			}
			dst.data = append(dst.data, src.data[lo:hi]...)
			dst.offsets = append(dst.offsets, uint64(len(dst.data)))
		}
		dst.n += uint64(len(rows))
		return nil
	}
	w := src.bits / 8
	switch w {
	case 8:
		at := len(dst.data)
		dst.data = append(dst.data, make([]byte, 8*len(rows))...)
		out := dst.data[at:]
		for i, r := range rows {
			copy(out[8*i:8*i+8], src.data[8*r:8*r+8])
		}
	default:
		for _, r := range rows {
			dst.data = append(dst.data, src.data[r*w:(r+1)*w]...)
		}
	}
	dst.n += uint64(len(rows))
	return nil
}

// readChunks reads the chunks wanted (ascending indices) from the data
// buffer (buffer 1) and returns their bytes in the same order. Chunks less
// than chunkReadGap apart share a read, and when the wanted chunks make up
// half the buffer or more they are read in one go from the first to the
// last; either way no byte is read twice.
func readChunks(src bufSource, chunks []miniChunk, wanted []int, wantBytes uint64) ([][]byte, error) {
	out := make([][]byte, len(wanted))
	if len(wanted) == 0 {
		return out, nil
	}
	end := chunks[len(chunks)-1].off + chunks[len(chunks)-1].size
	whole := 2*wantBytes >= end
	for i := 0; i < len(wanted); {
		j := i + 1
		for j < len(wanted) {
			prev := chunks[wanted[j-1]]
			if !whole && chunks[wanted[j]].off-(prev.off+prev.size) > chunkReadGap {
				break
			}
			j++
		}
		lo := chunks[wanted[i]].off
		last := chunks[wanted[j-1]]
		b, err := src.part(1, lo, last.off+last.size-lo)
		if err != nil {
			return nil, err
		}
		for k := i; k < j; k++ {
			c := chunks[wanted[k]]
			out[k] = b[c.off-lo : c.off-lo+c.size]
		}
		i = j
	}
	return out, nil
}
