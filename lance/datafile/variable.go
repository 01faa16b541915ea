package datafile

import (
	"encoding/binary"
	"fmt"
)

// readOffsets reads count little-endian offsets of bits (32 or 64) from b.
func readOffsets(b []byte, count, bits uint64) ([]uint64, error) {
	if bits != 32 && bits != 64 {
		return nil, unsupportedErr("offsets of %d bits are not supported", bits)
	}
	sz := bits / 8
	if count > uint64(len(b))/sz {
		return nil, fmt.Errorf("%d offsets of %d bits need more than %d bytes", count, bits, len(b))
	}
	out := make([]uint64, count)
	for i := range out {
		if sz == 4 {
			out[i] = uint64(binary.LittleEndian.Uint32(b[uint64(i)*4:]))
		} else {
			out[i] = binary.LittleEndian.Uint64(b[uint64(i)*8:])
		}
	}
	return out, nil
}

// variableMini decodes the mini-block Variable form: n+1 offsets measured
// from the start of the buffer, then the bytes.
func variableMini(b []byte, n, bits uint64) (block, error) {
	offs, err := readOffsets(b, n+1, bits)
	if err != nil {
		return block{}, err
	}
	base, err := rebaseOffsets(offs)
	if err != nil {
		return block{}, err
	}
	if base > uint64(len(b)) {
		return block{}, fmt.Errorf("variable data starts at %d, past the %d-byte buffer", base, len(b))
	}
	data := b[base:]
	if err := checkOffsets(offs, n, len(data)); err != nil {
		return block{}, err
	}
	return block{n: n, data: data[:offs[n]], offsets: offs}, nil
}

// variableBlock decodes the block Variable form: u32 bits per offset, the
// start of the bytes (u32 or u64), the offsets, then the bytes.
func variableBlock(b []byte, n, bits uint64) (block, error) {
	if len(b) < 8 {
		return block{}, fmt.Errorf("variable block of %d bytes has no header", len(b))
	}
	hb := uint64(binary.LittleEndian.Uint32(b))
	if hb != bits {
		return block{}, fmt.Errorf("variable block says %d-bit offsets, encoding says %d", hb, bits)
	}
	var start, offStart uint64
	switch bits {
	case 32:
		start, offStart = uint64(binary.LittleEndian.Uint32(b[4:])), 8
	case 64:
		if len(b) < 16 {
			return block{}, fmt.Errorf("variable block of %d bytes has no header", len(b))
		}
		start, offStart = binary.LittleEndian.Uint64(b[8:]), 16
	default:
		return block{}, unsupportedErr("offsets of %d bits are not supported", bits)
	}
	if start < offStart || start > uint64(len(b)) {
		return block{}, fmt.Errorf("variable block data starts at %d in a %d-byte buffer", start, len(b))
	}
	offs, err := readOffsets(b[offStart:start], n+1, bits)
	if err != nil {
		return block{}, err
	}
	base, err := rebaseOffsets(offs)
	if err != nil {
		return block{}, err
	}
	data := b[start:]
	if base > uint64(len(data)) {
		return block{}, fmt.Errorf("variable first offset %d is past the data", base)
	}
	data = data[base:]
	if err := checkOffsets(offs, n, len(data)); err != nil {
		return block{}, err
	}
	return block{n: n, data: data[:offs[n]], offsets: offs}, nil
}

func fsstExpand(d *fsstDecoder, in block, lim limits) (block, error) {
	if in.offsets == nil {
		return block{}, fmt.Errorf("fsst over fixed-width data")
	}
	out := block{n: in.n, offsets: make([]uint64, in.n+1)}
	// Each code expands to at most 8 bytes; reserve a little and grow.
	out.data = make([]byte, 0, len(in.data)*3)
	for i := uint64(0); i < in.n; i++ {
		var err error
		out.data, err = d.appendDecoded(out.data, in.value(i))
		if err != nil {
			return block{}, fmt.Errorf("fsst value %d: %w", i, err)
		}
		out.offsets[i+1] = uint64(len(out.data))
	}
	return out, nil
}

// rebaseOffsets makes offsets relative to the first one and returns it.
func rebaseOffsets(offs []uint64) (uint64, error) {
	base := offs[0]
	for i := range offs {
		if offs[i] < base {
			return 0, fmt.Errorf("variable offset %d (%d) precedes the first (%d)", i, offs[i], base)
		}
		offs[i] -= base
	}
	return base, nil
}
