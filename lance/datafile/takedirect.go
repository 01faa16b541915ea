package datafile

import (
	"encoding/binary"
	"fmt"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// takeDirect gathers rows (chunk-local, ascending) of one chunk of a flat,
// all-valid mini-block page (no rep or def levels) straight from its
// encoded values, without decoding the chunk: plainly bitpacked values
// are read one by one out of their FastLanes words (when the rows are
// few enough for that to beat unpacking all), variable-width values by
// their stored offsets. It reports false, having changed nothing, for any
// other encoding or for a chunk it cannot vouch for (the caller then
// decodes the chunk, reporting what is wrong).
func takeDirect(l *enc21pb.MiniBlockLayout, venc *enc21pb.CompressiveEncoding, b []byte, count uint64, wordSize int, rows []uint64, dst *block, total int) (bool, error) {
	if l.NumBuffers != 1 || l.RepCompression != nil || l.DefCompression != nil || len(rows) == 0 || rows[len(rows)-1] >= count {
		return false, nil
	}
	var t uint64
	var variable bool
	switch {
	case bitpackedBits(venc) > 0:
		t = bitpackedBits(venc)
		if 3*uint64(len(rows)) > count {
			return false, nil // unpacking the chunk costs less
		}
	case venc.GetVariable() != nil:
		v := venc.GetVariable()
		f := v.GetOffsets().GetFlat()
		if v.Values != nil || f == nil || f.Data != nil || f.BitsPerValue != 32 {
			return false, nil
		}
		variable = true
	default:
		return false, nil
	}
	// Header: the level count, the value buffer's size; then the buffer,
	// 8-aligned.
	pos := 2
	var size uint64
	if wordSize == 2 {
		if len(b) < 4 {
			return false, nil
		}
		size = uint64(binary.LittleEndian.Uint16(b[2:]))
		pos = 4
	} else {
		if len(b) < 6 {
			return false, nil
		}
		size = uint64(binary.LittleEndian.Uint32(b[2:]))
		pos = 6
	}
	pos = (pos + 7) &^ 7
	if uint64(pos)+size > uint64(len(b)) {
		return false, nil
	}
	vb := b[pos : uint64(pos)+size]
	if dst.n == 0 && dst.data == nil && dst.offsets == nil {
		if variable {
			*dst = block{offsets: make([]uint64, 1, total+1)}
		} else {
			*dst = block{bits: t, data: make([]byte, 0, uint64(total)*t/8)}
		}
	}
	if (dst.offsets != nil) != variable || (!variable && dst.bits != t) {
		return false, fmt.Errorf("chunks disagree on value layout")
	}
	if variable {
		return takeVariable(vb, count, rows, dst)
	}
	return takeBitpacked(vb, count, t, rows, dst)
}

// takeVariable gathers values of the mini-block Variable form (count+1
// u32 offsets from the buffer's start, then the bytes).
func takeVariable(vb []byte, count uint64, rows []uint64, dst *block) (bool, error) {
	if uint64(len(vb)) < 4*(count+1) {
		return false, nil
	}
	first := uint64(binary.LittleEndian.Uint32(vb))
	if first < 4*(count+1) || first > uint64(len(vb)) {
		return false, nil
	}
	// Checked before anything is appended, so that false changes nothing.
	for _, r := range rows {
		lo, hi := uint64(binary.LittleEndian.Uint32(vb[4*r:])), uint64(binary.LittleEndian.Uint32(vb[4*r+4:]))
		if lo < first || lo > hi || hi > uint64(len(vb)) {
			return false, nil
		}
	}
	for _, r := range rows {
		lo, hi := binary.LittleEndian.Uint32(vb[4*r:]), binary.LittleEndian.Uint32(vb[4*r+4:])
		dst.data = append(dst.data, vb[lo:hi]...)
		dst.offsets = append(dst.offsets, uint64(len(dst.data)))
	}
	dst.n += uint64(len(rows))
	return true, nil
}

// takeBitpacked gathers values of the inline bitpacked form: FastLanes
// chunks of 1024 values, each a T-bit width word then its packed words.
func takeBitpacked(vb []byte, count, t uint64, rows []uint64, dst *block) (bool, error) {
	sz := t / 8
	groups := (count + flChunk - 1) / flChunk
	type group struct {
		at, width uint64
	}
	gs := make([]group, groups)
	pos := uint64(0)
	for g := range gs {
		if pos+sz > uint64(len(vb)) {
			return false, nil
		}
		w := readWord(vb[pos:], sz)
		pos += sz
		nb := uint64(flWords(int(min(w, t)), int(t))) * sz
		if w > t || pos+nb > uint64(len(vb)) {
			return false, nil
		}
		gs[g] = group{pos, w}
		pos += nb
	}
	lanes := flChunk / t
	at := uint64(len(dst.data))
	dst.data = append(dst.data, make([]byte, uint64(len(rows))*sz)...)
	out := dst.data[at:]
	for i, r := range rows {
		g := gs[r/flChunk]
		j := r % flChunk
		var v uint64
		if g.width > 0 {
			v = fastLanesAt(vb[g.at:], j, g.width, t, lanes)
		}
		putWord(out[uint64(i)*sz:], v, sz)
	}
	dst.n += uint64(len(rows))
	return true, nil
}

// fastLanesAt returns value j (0..1023) of a FastLanes chunk of width w
// over t-bit words with lanes lanes, packed in words: the inverse of the
// layout flUnpack writes (row r of lane l is value flOrder[r/8]*16 +
// (r%8)*128 + l; flOrder is its own inverse).
func fastLanesAt(words []byte, j, w, t, lanes uint64) uint64 {
	hi, rem := j/128, j%128
	l := rem % lanes
	r := uint64(flOrder[(rem-l)/16])*8 + hi
	p := r * w
	k, sh := p/t, p%t
	sz := t / 8
	v := readWord(words[(lanes*k+l)*sz:], sz) >> sh
	if sh+w > t {
		v |= readWord(words[(lanes*(k+1)+l)*sz:], sz) << (t - sh)
	}
	if w < 64 {
		v &= 1<<w - 1
	}
	return v
}

func readWord(b []byte, sz uint64) uint64 {
	switch sz {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

func putWord(b []byte, v, sz uint64) {
	switch sz {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, v)
	}
}
