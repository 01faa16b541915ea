package datafile

import (
	"encoding/binary"
	"fmt"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// decodeConstant decodes a constant / all-null page (PageLayout tag 2):
// optional rep and def level buffers (raw u16, or compressed as the layout
// says) and either no value (all visible items are null), an inline
// fixed-width value, or (without levels) one buffered value.
func decodeConstant(l *enc21pb.ConstantLayout, bufs [][]byte, numRows uint64, lim limits) (*pageData, error) {
	if numRows > lim.maxItems {
		return nil, fmt.Errorf("constant page claims %d rows", numRows)
	}
	if len(l.Layers) == 0 {
		return nil, fmt.Errorf("constant page without layers")
	}
	pd := &pageData{layers: l.Layers, numRows: numRows}
	hasLevels := l.RepCompression != nil || l.DefCompression != nil || l.NumRepValues != 0 || l.NumDefValues != 0 || len(l.Layers) > 1
	var valueBuf []byte
	switch {
	case hasLevels:
		// Levels live in two buffers, rep then def; an empty one is absent.
		if len(bufs) != 2 {
			return nil, fmt.Errorf("constant page with levels has %d buffers, want 2", len(bufs))
		}
		var err error
		if pd.rep, err = constantLevels(l.RepCompression, bufs[0], l.NumRepValues, lim); err != nil {
			return nil, fmt.Errorf("rep levels: %w", err)
		}
		if pd.def, err = constantLevels(l.DefCompression, bufs[1], l.NumDefValues, lim); err != nil {
			return nil, fmt.Errorf("def levels: %w", err)
		}
	case len(bufs) == 1:
		valueBuf = bufs[0]
	case len(bufs) > 1:
		return nil, fmt.Errorf("constant page has %d buffers", len(bufs))
	}
	switch {
	case l.InlineValue != nil:
		if valueBuf != nil {
			return nil, fmt.Errorf("constant page has both an inline and a buffered value")
		}
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
	if pd.def == nil && pd.rep == nil && pd.constVal != nil {
		// Constant rows without levels: one visible value per row.
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
