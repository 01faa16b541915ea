package datafile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// maxDecompressed bounds the size a compressed buffer may claim, so a corrupt
// size prefix cannot drive a huge allocation.
const maxDecompressed = 1 << 31

// lz4Block decodes Lance's LZ4 framing: a u32 uncompressed size followed by
// one raw LZ4 block.
func lz4Block(b []byte) ([]byte, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("lz4 buffer of %d bytes has no size prefix", len(b))
	}
	n := binary.LittleEndian.Uint32(b)
	// LZ4 expands at most 255x; larger claims are corrupt.
	if uint64(n) > uint64(len(b)-4)*255+16 || n > maxDecompressed {
		return nil, fmt.Errorf("lz4 block claims %d bytes from %d", n, len(b)-4)
	}
	out := make([]byte, n)
	got, err := lz4.UncompressBlock(b[4:], out)
	if err != nil {
		return nil, fmt.Errorf("lz4: %w", err)
	}
	if got != int(n) {
		return nil, fmt.Errorf("lz4 block gave %d bytes, want %d", got, n)
	}
	return out, nil
}

// zstdBuffer decodes Lance's zstd framings: a plain zstd frame, or a u64
// uncompressed size followed by a zstd stream.
func zstdBuffer(b []byte) ([]byte, error) {
	body := b
	limit := uint64(maxDecompressed)
	if len(b) >= 4 && binary.LittleEndian.Uint32(b) != 0xFD2FB528 {
		if len(b) < 8 {
			return nil, fmt.Errorf("zstd buffer of %d bytes has no size prefix", len(b))
		}
		limit = binary.LittleEndian.Uint64(b)
		body = b[8:]
		if limit > maxDecompressed {
			return nil, fmt.Errorf("zstd buffer claims %d bytes", limit)
		}
	}
	d, err := zstd.NewReader(bytes.NewReader(body), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(limit+1))
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	defer d.Close()
	out, err := io.ReadAll(io.LimitReader(d, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	if uint64(len(out)) > limit {
		return nil, fmt.Errorf("zstd output exceeds %d bytes", limit)
	}
	if body := len(b) - len(body); body == 8 && uint64(len(out)) != limit {
		return nil, fmt.Errorf("zstd gave %d bytes, size prefix says %d", len(out), limit)
	}
	return out, nil
}

// fsstTableSize is the fixed size of a serialized FSST symbol table.
const fsstTableSize = 8 + 256*8 + 256

// fsstMagic is the FSST header magic in the top 32 bits of the table word.
const fsstMagic = 0x46535354

// fsstDecoder expands FSST codes.
type fsstDecoder struct {
	raw  bool // encoder was switched off: bytes pass through
	syms [256][8]byte
	lens [256]byte
	n    int
}

// newFSST parses a serialized symbol table.
func newFSST(table []byte) (*fsstDecoder, error) {
	if len(table) != fsstTableSize {
		return nil, fmt.Errorf("fsst symbol table is %d bytes, want %d", len(table), fsstTableSize)
	}
	h := binary.LittleEndian.Uint64(table)
	d := &fsstDecoder{}
	// LanceDB 0.39 writes an all-zero table when it skipped compression.
	if h == 0 {
		d.raw = true
		return d, nil
	}
	if h>>32 != fsstMagic {
		return nil, fmt.Errorf("fsst symbol table has bad magic %#x", h>>32)
	}
	if h&(1<<24) == 0 {
		d.raw = true
		return d, nil
	}
	d.n = int(h & 0xff)
	pos := 8
	for i := 0; i < d.n; i++ {
		copy(d.syms[i][:], table[pos:pos+8])
		pos += 8
	}
	for i := 0; i < d.n; i++ {
		d.lens[i] = table[pos]
		if d.lens[i] == 0 || d.lens[i] > 8 {
			return nil, fmt.Errorf("fsst symbol %d has length %d", i, d.lens[i])
		}
		pos++
	}
	return d, nil
}

// appendDecoded appends the expansion of one compressed value to dst.
func (d *fsstDecoder) appendDecoded(dst, src []byte) ([]byte, error) {
	if d.raw {
		return append(dst, src...), nil
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == 255 {
			i++
			if i >= len(src) {
				return nil, fmt.Errorf("fsst escape at the end of a value")
			}
			dst = append(dst, src[i])
			continue
		}
		if int(c) >= d.n {
			return nil, fmt.Errorf("fsst code %d but only %d symbols", c, d.n)
		}
		dst = append(dst, d.syms[c][:d.lens[c]]...)
	}
	return dst, nil
}
