package datafile

import (
	"encoding/binary"
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
		return 0, fmt.Errorf("unsupported value width of %d bits", bits)
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
			return block{}, fmt.Errorf("out-of-line bitpacking over %v is not supported", e.OutOfLineBitpacking.GetValues())
		}
		return outOfLineBitpacked(b, n, e.OutOfLineBitpacking.UncompressedBitsPerValue, f.BitsPerValue)
	case *enc21pb.CompressiveEncoding_Variable:
		b, err := one()
		if err != nil {
			return block{}, err
		}
		if e.Variable.Values != nil {
			return block{}, fmt.Errorf("variable encoding with compressed values is not supported")
		}
		f := e.Variable.GetOffsets().GetFlat()
		if f == nil || f.Data != nil {
			return block{}, fmt.Errorf("variable encoding with offsets %v is not supported", e.Variable.GetOffsets())
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
			return block{}, fmt.Errorf("fixed-size list over %v is not supported", f.GetValues())
		}
		var vbits []byte
		if f.HasValidity {
			if !mini || len(bufs) != 2 {
				return block{}, fmt.Errorf("fixed-size list with item validity in %d buffers is not supported", len(bufs))
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
		return block{}, fmt.Errorf("compressive encoding is empty or of a kind newer than this reader")
	default:
		return block{}, fmt.Errorf("compressive encoding %T is not supported", e)
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
	return nil, fmt.Errorf("general compression scheme %v is not supported", c.GetScheme())
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

// unpackInto unpacks one chunk of width w from the little-endian words in
// src into dst (1024 values of t bits, little-endian).
func unpackInto(t int, w int, src []byte, dst []byte) error {
	nw := flWords(w, t)
	if len(src) != nw*t/8 || len(dst) != flChunk*t/8 {
		return fmt.Errorf("fastlanes chunk of width %d needs %d bytes, got %d", w, nw*t/8, len(src))
	}
	switch t {
	case 8:
		return flUnpack(w, src, dst)
	case 16:
		return unpackLE[uint16](w, src, dst, binary.LittleEndian.Uint16, binary.LittleEndian.PutUint16)
	case 32:
		return unpackLE[uint32](w, src, dst, binary.LittleEndian.Uint32, binary.LittleEndian.PutUint32)
	case 64:
		return unpackLE[uint64](w, src, dst, binary.LittleEndian.Uint64, binary.LittleEndian.PutUint64)
	}
	return fmt.Errorf("bitpacking of %d-bit values is not supported", t)
}

func unpackLE[T word](w int, src, dst []byte, get func([]byte) T, put func([]byte, T)) error {
	sz := bitsOf[T]() / 8
	in := make([]T, len(src)/sz)
	for i := range in {
		in[i] = get(src[i*sz:])
	}
	out := make([]T, flChunk)
	if err := flUnpack(w, in, out); err != nil {
		return err
	}
	for i, v := range out {
		put(dst[i*sz:], v)
	}
	return nil
}

func checkWordBits(t uint64) error {
	if t != 8 && t != 16 && t != 32 && t != 64 {
		return fmt.Errorf("bitpacking of %d-bit values is not supported", t)
	}
	return nil
}

// inlineBitpacked decodes chunks of [T-bit width word][packed words].
func inlineBitpacked(b []byte, n, t uint64) (block, error) {
	if err := checkWordBits(t); err != nil {
		return block{}, err
	}
	sz := t / 8
	chunks := (n + flChunk - 1) / flChunk
	if chunks > uint64(len(b))/sz+1 {
		return block{}, fmt.Errorf("%d values need %d bitpacked chunks, buffer has %d bytes", n, chunks, len(b))
	}
	out := make([]byte, chunks*flChunk*sz)
	pos := uint64(0)
	for c := uint64(0); c < chunks; c++ {
		if pos+sz > uint64(len(b)) {
			return block{}, fmt.Errorf("bitpacked chunk %d header is past the %d-byte buffer", c, len(b))
		}
		var w uint64
		for k := uint64(0); k < sz; k++ {
			w |= uint64(b[pos+k]) << (8 * k)
		}
		pos += sz
		if w > t {
			return block{}, fmt.Errorf("bitpacked chunk %d has width %d for %d-bit values", c, w, t)
		}
		nb := uint64(flWords(int(w), int(t))) * sz
		if pos+nb > uint64(len(b)) {
			return block{}, fmt.Errorf("bitpacked chunk %d (width %d) is past the %d-byte buffer", c, w, len(b))
		}
		if err := unpackInto(int(t), int(w), b[pos:pos+nb], out[c*flChunk*sz:(c+1)*flChunk*sz]); err != nil {
			return block{}, err
		}
		pos += nb
	}
	return block{n: n, bits: t, data: out[:n*sz]}, nil
}

// outOfLineBitpacked decodes whole chunks of width w; the tail is either a
// padded packed chunk or n%1024 raw values (told apart by buffer length).
func outOfLineBitpacked(b []byte, n, t, w uint64) (block, error) {
	if err := checkWordBits(t); err != nil {
		return block{}, err
	}
	if w > t {
		return block{}, fmt.Errorf("bit width %d exceeds %d-bit values", w, t)
	}
	sz := t / 8
	whole, tail := n/flChunk, n%flChunk
	chunkBytes := uint64(flWords(int(w), int(t))) * sz
	if whole > uint64(len(b))/max(chunkBytes, 1)+1 {
		return block{}, fmt.Errorf("%d values need more than the %d-byte buffer", n, len(b))
	}
	out := make([]byte, (whole+1)*flChunk*sz)
	for c := uint64(0); c < whole; c++ {
		if (c+1)*chunkBytes > uint64(len(b)) {
			return block{}, fmt.Errorf("bitpacked chunk %d is past the %d-byte buffer", c, len(b))
		}
		if err := unpackInto(int(t), int(w), b[c*chunkBytes:(c+1)*chunkBytes], out[c*flChunk*sz:(c+1)*flChunk*sz]); err != nil {
			return block{}, err
		}
	}
	if tail > 0 {
		rest := b[min(whole*chunkBytes, uint64(len(b))):]
		switch {
		case uint64(len(rest)) == tail*sz:
			copy(out[whole*flChunk*sz:], rest)
		case uint64(len(rest)) >= chunkBytes:
			if err := unpackInto(int(t), int(w), rest[:chunkBytes], out[whole*flChunk*sz:(whole+1)*flChunk*sz]); err != nil {
				return block{}, err
			}
		default:
			return block{}, fmt.Errorf("bitpacked tail of %d values has %d bytes", tail, len(rest))
		}
	}
	return block{n: n, bits: t, data: out[:n*sz]}, nil
}

// readOffsets reads count little-endian offsets of bits (32 or 64) from b.
func readOffsets(b []byte, count, bits uint64) ([]uint64, error) {
	if bits != 32 && bits != 64 {
		return nil, fmt.Errorf("offsets of %d bits are not supported", bits)
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
	base := offs[0]
	for i := range offs {
		if offs[i] < base {
			return block{}, fmt.Errorf("variable offset %d (%d) precedes the first (%d)", i, offs[i], base)
		}
		offs[i] -= base
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
		return block{}, fmt.Errorf("offsets of %d bits are not supported", bits)
	}
	if start < offStart || start > uint64(len(b)) {
		return block{}, fmt.Errorf("variable block data starts at %d in a %d-byte buffer", start, len(b))
	}
	offs, err := readOffsets(b[offStart:start], n+1, bits)
	if err != nil {
		return block{}, err
	}
	base := offs[0]
	for i := range offs {
		if offs[i] < base {
			return block{}, fmt.Errorf("variable offset %d (%d) precedes the first (%d)", i, offs[i], base)
		}
		offs[i] -= base
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

// rleDecode expands run values and u8 run lengths.
func rleDecode(e *enc21pb.Rle, bufs [][]byte, n uint64, mini bool, lim limits) (block, error) {
	vf, rf := e.GetValues().GetFlat(), e.GetRunLengths().GetFlat()
	if vf == nil || rf == nil || vf.Data != nil || rf.Data != nil || rf.BitsPerValue != 8 {
		return block{}, fmt.Errorf("rle over %v / %v is not supported", e.GetValues(), e.GetRunLengths())
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
		return nil, fmt.Errorf("levels of %d bits are not supported", b.bits)
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
