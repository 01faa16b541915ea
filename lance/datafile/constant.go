package datafile

import (
	"encoding/binary"
	"fmt"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// decodeConstant decodes a constant / all-null page (PageLayout tag 2).
// Observed buffer orders (LanceDB 0.39): none; [value]; [rep, def];
// [value, rep, def]: the level buffers are present only when some layer
// has levels, and then both are (an empty one means none), whatever the
// number of layers. The value is inline (fixed width) or in the value
// buffer; without one every visible item is null. Levels are raw u16 unless
// the layout names their compression; an empty level buffer means none.
func decodeConstant(l *enc21pb.ConstantLayout, bufs [][]byte, numRows uint64, lim limits) (*pageData, error) {
	if numRows > lim.maxItems {
		return nil, fmt.Errorf("constant page claims %d rows", numRows)
	}
	if len(l.Layers) == 0 {
		return nil, fmt.Errorf("constant page without layers")
	}
	pd := &pageData{layers: l.Layers, numRows: numRows}
	inline := l.InlineValue != nil
	var valueBuf, repBuf, defBuf []byte
	hasLevels := false
	switch {
	case len(bufs) == 0:
	case len(bufs) == 1 && !inline:
		valueBuf = bufs[0]
	case len(bufs) == 2:
		repBuf, defBuf, hasLevels = bufs[0], bufs[1], true
	case len(bufs) == 3 && !inline:
		valueBuf, repBuf, defBuf, hasLevels = bufs[0], bufs[1], bufs[2], true
	default:
		return nil, unsupportedErr("constant page with %d buffers and inline value %v is not supported", len(bufs), inline)
	}
	if !hasLevels {
		// No level buffers: every layer is all valid (a struct of structs
		// equal in every row has one layer per struct and none of them
		// needs levels); only a list layer cannot do without them.
		if l.RepCompression != nil || l.DefCompression != nil || l.NumRepValues != 0 || l.NumDefValues != 0 {
			return nil, fmt.Errorf("constant page describes levels but has %d buffers", len(bufs))
		}
		for _, layer := range l.Layers {
			if isListLayer(layer) {
				return nil, fmt.Errorf("constant page of lists (layers %v) has no repetition levels", l.Layers)
			}
		}
	}
	if hasLevels {
		var err error
		if pd.rep, err = constantLevels(l.RepCompression, repBuf, l.NumRepValues, lim); err != nil {
			return nil, fmt.Errorf("rep levels: %w", err)
		}
		if pd.def, err = constantLevels(l.DefCompression, defBuf, l.NumDefValues, lim); err != nil {
			return nil, fmt.Errorf("def levels: %w", err)
		}
	}
	switch {
	case inline:
		v := l.InlineValue
		if len(v) == 0 || len(v) > 32 {
			return nil, fmt.Errorf("inline constant of %d bytes", len(v))
		}
		pd.constVal = &block{n: 1, bits: uint64(len(v)) * 8, data: v, isConst: true}
	case valueBuf != nil:
		blk, err := constantValue(valueBuf)
		if err != nil {
			return nil, err
		}
		blk.isConst = true
		pd.constVal = &blk
	default:
		pd.allNull = true
		if !hasLevels {
			// One nullable item layer and no levels: every row is null.
			if l.Layers[0] != enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM {
				return nil, fmt.Errorf("all-null page with non-nullable layer %v", l.Layers[0])
			}
			pd.def = make([]uint16, numRows)
			for i := range pd.def {
				pd.def[i] = 1
			}
		}
	}
	if pd.def == nil && pd.rep == nil {
		// No levels: one item per row.
		pd.levels = numRows
	}
	return pd, nil
}

// constantLevels decodes one level buffer of a constant page: compressed
// when enc is set (n levels), else raw u16; empty means no levels.
func constantLevels(enc *enc21pb.CompressiveEncoding, b []byte, n uint64, lim limits) ([]uint16, error) {
	if len(b) == 0 {
		if enc != nil && n > 0 {
			return nil, fmt.Errorf("%d compressed levels in an empty buffer", n)
		}
		return nil, nil
	}
	if enc == nil {
		if len(b)%2 != 0 {
			return nil, fmt.Errorf("raw u16 levels in %d bytes", len(b))
		}
		out := make([]uint16, len(b)/2)
		for i := range out {
			out[i] = binary.LittleEndian.Uint16(b[2*i:])
		}
		return out, nil
	}
	blk, err := decodeComp(enc, [][]byte{b}, n, false, lim)
	if err != nil {
		return nil, err
	}
	return levels(blk)
}

// expand repeats a constant value n times.
func (c *block) expand(n uint64, lim limits) (block, error) {
	if c.offsets == nil {
		w := c.bits / 8
		if w > 0 && n > lim.maxBytes/w {
			return block{}, fmt.Errorf("constant of %d bytes over %d values is too large", w, n)
		}
		return block{n: n, bits: c.bits, data: repeatBytes(c.data, n), isConst: true}, nil
	}
	v := c.value(0)
	if len(v) > 0 && n > lim.maxBytes/uint64(len(v)) {
		return block{}, fmt.Errorf("constant of %d bytes over %d values is too large", len(v), n)
	}
	out := block{n: n, offsets: make([]uint64, n+1), data: repeatBytes(v, n)}
	for i := range out.offsets {
		out.offsets[i] = uint64(i) * uint64(len(v))
	}
	return out, nil
}

func repeatBytes(v []byte, n uint64) []byte {
	out := make([]byte, 0, uint64(len(v))*n)
	for i := uint64(0); i < n; i++ {
		out = append(out, v...)
	}
	return out
}

// constantValue parses a single-value buffer: u32 buffer count, u32 sizes,
// then the buffers (one: fixed-width bytes; two: offsets and bytes).
func constantValue(b []byte) (block, error) {
	if len(b) < 4 {
		return block{}, fmt.Errorf("constant value buffer of %d bytes", len(b))
	}
	nb := binary.LittleEndian.Uint32(b)
	if nb == 0 || nb > 2 || len(b) < 4+4*int(nb) {
		return block{}, fmt.Errorf("constant value buffer with %d parts in %d bytes", nb, len(b))
	}
	pos := uint64(4 + 4*nb)
	parts := make([][]byte, nb)
	for i := range parts {
		s := uint64(binary.LittleEndian.Uint32(b[4+4*i:]))
		if s > uint64(len(b))-pos {
			return block{}, fmt.Errorf("constant value part %d of %d bytes is past the buffer", i, s)
		}
		parts[i] = b[pos : pos+s]
		pos += s
	}
	if nb == 1 {
		return block{n: 1, bits: uint64(len(parts[0])) * 8, data: parts[0]}, nil
	}
	var bits uint64
	switch len(parts[0]) {
	case 8:
		bits = 32
	case 16:
		bits = 64
	default:
		return block{}, fmt.Errorf("constant value offsets of %d bytes", len(parts[0]))
	}
	offs, err := readOffsets(parts[0], 2, bits)
	if err != nil {
		return block{}, err
	}
	if offs[0] > offs[1] || offs[1] > uint64(len(parts[1])) {
		return block{}, fmt.Errorf("constant value offsets %v out of range", offs)
	}
	return block{n: 1, data: parts[1][offs[0]:offs[1]], offsets: []uint64{0, offs[1] - offs[0]}}, nil
}
