package datafile

import (
	"encoding/binary"
	"fmt"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// rleDecode expands run values and u8 run lengths.
func rleDecode(e *enc21pb.Rle, bufs [][]byte, n uint64, mini bool, lim limits) (block, error) {
	vf, rf := e.GetValues().GetFlat(), e.GetRunLengths().GetFlat()
	if vf == nil || rf == nil || vf.Data != nil || rf.Data != nil || rf.BitsPerValue != 8 {
		return block{}, unsupportedErr("rle over %v / %v is not supported", e.GetValues(), e.GetRunLengths())
	}
	t := vf.BitsPerValue
	if err := checkWordBits(t); err != nil {
		return block{}, err
	}
	var vals, runs []byte
	if mini {
		if len(bufs) != 2 {
			return block{}, fmt.Errorf("rle wants 2 buffers, got %d", len(bufs))
		}
		vals, runs = bufs[0], bufs[1]
	} else {
		if len(bufs) != 1 || len(bufs[0]) < 8 {
			return block{}, fmt.Errorf("rle block has no header")
		}
		vl := binary.LittleEndian.Uint64(bufs[0])
		if vl > uint64(len(bufs[0])-8) {
			return block{}, fmt.Errorf("rle values length %d exceeds the %d-byte buffer", vl, len(bufs[0]))
		}
		vals, runs = bufs[0][8:8+vl], bufs[0][8+vl:]
	}
	sz := t / 8
	if n > uint64(len(runs))*255 {
		return block{}, fmt.Errorf("%d runs cannot hold %d values", len(runs), n)
	}
	if uint64(len(vals))%sz != 0 || uint64(len(vals))/sz < uint64(len(runs)) {
		return block{}, fmt.Errorf("rle has %d value bytes for %d runs of %d-bit values", len(vals), len(runs), t)
	}
	out := make([]byte, n*sz)
	pos := uint64(0)
	for i, r := range runs {
		v := vals[uint64(i)*sz : uint64(i+1)*sz]
		for k := 0; k < int(r); k++ {
			if pos >= n {
				return block{}, fmt.Errorf("rle runs exceed %d values", n)
			}
			copy(out[pos*sz:], v)
			pos++
		}
	}
	if pos != n {
		return block{}, fmt.Errorf("rle runs give %d values, want %d", pos, n)
	}
	return block{n: n, bits: t, data: out}, nil
}

// unsplitBytes reverses byte-stream-split: plane k holds byte k of each value.
func unsplitBytes(in block) (block, error) {
	if in.offsets != nil || in.bits%8 != 0 {
		return block{}, fmt.Errorf("byte stream split over %d-bit data", in.bits)
	}
	w := in.bits / 8
	out := make([]byte, len(in.data))
	for k := uint64(0); k < w; k++ {
		for i := uint64(0); i < in.n; i++ {
			out[i*w+k] = in.data[k*in.n+i]
		}
	}
	in.data = out
	return in, nil
}

// levels converts a decoded block of rep or def levels to u16.
func levels(b block) ([]uint16, error) {
	if b.offsets != nil || b.bits > 16 || b.bits == 0 {
		return nil, unsupportedErr("levels of %d bits are not supported", b.bits)
	}
	out := make([]uint16, b.n)
	switch b.bits {
	case 8:
		for i := range out {
			out[i] = uint16(b.data[i])
		}
	case 16:
		for i := range out {
			out[i] = binary.LittleEndian.Uint16(b.data[2*i:])
		}
	default:
		// Sub-byte flat levels (observed: def levels as flat 1 are not
		// written, but decode them LSB-first for completeness).
		for i := range out {
			var v uint16
			for k := uint64(0); k < b.bits; k++ {
				bit := uint64(i)*b.bits + k
				v |= uint16(b.data[bit/8]>>(bit%8)&1) << k
			}
			out[i] = v
		}
	}
	return out, nil
}
