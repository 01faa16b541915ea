package datafile

import (
	"fmt"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// block is a decompressed run of n values: fixed-width (bits > 0, packed
// little-endian in data) or variable-width (offsets, n+1 of them, into data).
type block struct {
	n       uint64
	bits    uint64
	data    []byte
	offsets []uint64
	// isConst marks values that came from a constant page's single value,
	// whose width is the value's byte width (a bool constant is one byte).
	isConst bool
	// itemValid is the item validity of fixed-size-list values, packed per
	// value ((dim+7)/8 bytes each); nil when the items carry no validity.
	itemValid []byte
	dim       uint64
}

// fixedBytes is the byte size n values of bits each need.
func fixedBytes(n, bits uint64) (uint64, error) {
	if bits == 0 || (bits > 8 && bits%8 != 0) || bits > 1<<20 {
		return 0, unsupportedErr("unsupported value width of %d bits", bits)
	}
	if n > (1<<62)/bits {
		return 0, fmt.Errorf("%d values of %d bits overflow", n, bits)
	}
	return (n*bits + 7) / 8, nil
}

// value returns the bytes of variable-width value i.
func (b *block) value(i uint64) []byte { return b.data[b.offsets[i]:b.offsets[i+1]] }

// checkOffsets validates that offsets are n+1 non-decreasing positions
// within data.
func checkOffsets(offs []uint64, n uint64, size int) error {
	if uint64(len(offs)) != n+1 {
		return fmt.Errorf("%d offsets for %d values", len(offs), n)
	}
	for i := uint64(0); i < n; i++ {
		if offs[i] > offs[i+1] {
			return fmt.Errorf("offset %d (%d) exceeds offset %d (%d)", i, offs[i], i+1, offs[i+1])
		}
	}
	if offs[n] > uint64(size) {
		return fmt.Errorf("last offset %d is past the %d data bytes", offs[n], size)
	}
	return nil
}

// decodeComp decompresses n values described by enc from bufs. mini selects
// the mini-block form of encodings whose mini-block and block forms differ
// (Variable, Rle); otherwise bufs holds one block-form buffer.
func decodeComp(enc *enc21pb.CompressiveEncoding, bufs [][]byte, n uint64, mini bool, lim limits) (block, error) {
	if n > lim.maxItems {
		return block{}, fmt.Errorf("%d values exceed what the file can hold", n)
	}
	one := func() ([]byte, error) {
		if len(bufs) != 1 {
			return nil, fmt.Errorf("encoding wants 1 buffer, got %d", len(bufs))
		}
		return bufs[0], nil
	}
	switch e := enc.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Flat:
		b, err := one()
		if err != nil {
			return block{}, err
		}
		if e.Flat.Data != nil {
			if b, err = general(e.Flat.Data, b); err != nil {
				return block{}, err
			}
		}
		return flatBlock(b, n, e.Flat.BitsPerValue)
	case *enc21pb.CompressiveEncoding_InlineBitpacking:
		b, err := one()
		if err != nil {
			return block{}, err
		}
		if e.InlineBitpacking.Values != nil {
			if b, err = general(e.InlineBitpacking.Values, b); err != nil {
				return block{}, err
			}
		}
		return inlineBitpacked(b, n, e.InlineBitpacking.UncompressedBitsPerValue)
	case *enc21pb.CompressiveEncoding_OutOfLineBitpacking:
		b, err := one()
		if err != nil {
			return block{}, err
		}
		f := e.OutOfLineBitpacking.GetValues().GetFlat()
		if f == nil || f.Data != nil {
			return block{}, unsupportedErr("out-of-line bitpacking over %v is not supported", e.OutOfLineBitpacking.GetValues())
		}
		return outOfLineBitpacked(b, n, e.OutOfLineBitpacking.UncompressedBitsPerValue, f.BitsPerValue)
	case *enc21pb.CompressiveEncoding_Variable:
		b, err := one()
		if err != nil {
			return block{}, err
		}
		if e.Variable.Values != nil {
			return block{}, unsupportedErr("variable encoding with compressed values is not supported")
		}
		f := e.Variable.GetOffsets().GetFlat()
		if f == nil || f.Data != nil {
			return block{}, unsupportedErr("variable encoding with offsets %v is not supported", e.Variable.GetOffsets())
		}
		if mini {
			return variableMini(b, n, f.BitsPerValue)
		}
		return variableBlock(b, n, f.BitsPerValue)
	case *enc21pb.CompressiveEncoding_Fsst:
		d, err := newFSST(e.Fsst.SymbolTable)
		if err != nil {
			return block{}, err
		}
		inner, err := decodeComp(e.Fsst.Values, bufs, n, mini, lim)
		if err != nil {
			return block{}, fmt.Errorf("fsst values: %w", err)
		}
		return fsstExpand(d, inner, lim)
	case *enc21pb.CompressiveEncoding_Rle:
		return rleDecode(e.Rle, bufs, n, mini, lim)
	case *enc21pb.CompressiveEncoding_General:
		out := make([][]byte, len(bufs))
		for i, b := range bufs {
			var err error
			if out[i], err = general(e.General.Compression, b); err != nil {
				return block{}, err
			}
		}
		return decodeComp(e.General.Values, out, n, mini, lim)
	case *enc21pb.CompressiveEncoding_FixedSizeList:
		// Fixed-size lists of fixed-width items without item validity,
		// flattened: n values are n*dim items.
		// In mini-block, item validity is a bitmap over the chunk's n*dim
		// items in the first buffer; the items follow in the others.
		f := e.FixedSizeList
		dim := f.ItemsPerValue
		if dim == 0 || dim > 1<<20 || n > lim.maxItems/dim {
			return block{}, fmt.Errorf("fixed-size list of %d x %d items", n, dim)
		}
		if f.GetValues().GetFlat() == nil {
			return block{}, unsupportedErr("fixed-size list over %v is not supported", f.GetValues())
		}
		var vbits []byte
		if f.HasValidity {
			if !mini || len(bufs) != 2 {
				return block{}, unsupportedErr("fixed-size list with item validity in %d buffers is not supported", len(bufs))
			}
			vbits, bufs = bufs[0], bufs[1:]
			if uint64(len(vbits)) < (n*dim+7)/8 {
				return block{}, fmt.Errorf("item validity of %d bytes for %d items", len(vbits), n*dim)
			}
		}
		inner, err := decodeComp(f.Values, bufs, n*dim, mini, lim)
		if err != nil {
			return block{}, fmt.Errorf("fixed-size list items: %w", err)
		}
		if inner.offsets != nil || inner.bits%8 != 0 {
			return block{}, fmt.Errorf("fixed-size list of %d-bit items", inner.bits)
		}
		out := block{n: n, bits: inner.bits * dim, data: inner.data, dim: dim}
		if vbits != nil {
			vb := (dim + 7) / 8
			out.itemValid = make([]byte, n*vb)
			for i := uint64(0); i < n*dim; i++ {
				if vbits[i/8]>>(i%8)&1 == 1 {
					r, k := i/dim, i%dim
					out.itemValid[r*vb+k/8] |= 1 << (k % 8)
				}
			}
		}
		return out, nil
	case *enc21pb.CompressiveEncoding_ByteStreamSplit:
		inner, err := decodeComp(e.ByteStreamSplit.Values, bufs, n, mini, lim)
		if err != nil {
			return block{}, fmt.Errorf("byte stream split values: %w", err)
		}
		return unsplitBytes(inner)
	case nil:
		return block{}, unsupportedErr("compressive encoding is empty or of a kind newer than this reader")
	default:
		return block{}, unsupportedErr("compressive encoding %T is not supported", e)
	}
}

// general undoes a whole-buffer general compression.
func general(c *enc21pb.BufferCompression, b []byte) ([]byte, error) {
	switch c.GetScheme() {
	case enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_LZ4:
		return lz4Block(b)
	case enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD:
		return zstdBuffer(b)
	}
	return nil, unsupportedErr("general compression scheme %v is not supported", c.GetScheme())
}

func flatBlock(b []byte, n, bits uint64) (block, error) {
	size, err := fixedBytes(n, bits)
	if err != nil {
		return block{}, err
	}
	if uint64(len(b)) < size {
		return block{}, fmt.Errorf("flat buffer holds %d bytes, %d values of %d bits need %d", len(b), n, bits, size)
	}
	return block{n: n, bits: bits, data: b[:size]}, nil
}
