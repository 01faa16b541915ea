package datafile

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// littleEndian reports whether this machine stores words little-endian,
// as Lance files do: bitpacked words are then unpacked in place.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

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
		return unpackLE[uint16](w, src, dst)
	case 32:
		return unpackLE[uint32](w, src, dst)
	case 64:
		return unpackLE[uint64](w, src, dst)
	}
	return unsupportedErr("bitpacking of %d-bit values is not supported", t)
}

// unpackLE unpacks one chunk of T words. The words live in arrays on the
// stack, and are loaded and stored by concrete-typed loops, because this
// runs once per 1024 values of every bitpacked page a scan or take decodes.
func unpackLE[T word](w int, src, dst []byte) error {
	sz := bitsOf[T]() / 8
	if len(src)/sz > flChunk {
		return fmt.Errorf("fastlanes chunk of %d bytes is wider than %d-bit values", len(src), 8*sz)
	}
	if littleEndian && len(src) > 0 && aligned[T](src) && aligned[T](dst) {
		in := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(src))), len(src)/sz)
		out := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst)/sz)
		return flUnpack(w, in, out)
	}
	var inArr, out [flChunk]T
	in := inArr[:len(src)/sz]
	switch v := any(in).(type) {
	case []uint16:
		for i := range v {
			v[i] = binary.LittleEndian.Uint16(src[2*i:])
		}
	case []uint32:
		for i := range v {
			v[i] = binary.LittleEndian.Uint32(src[4*i:])
		}
	case []uint64:
		for i := range v {
			v[i] = binary.LittleEndian.Uint64(src[8*i:])
		}
	}
	if err := flUnpack(w, in, out[:]); err != nil {
		return err
	}
	switch v := any(out[:]).(type) {
	case []uint16:
		for i, x := range v {
			binary.LittleEndian.PutUint16(dst[2*i:], x)
		}
	case []uint32:
		for i, x := range v {
			binary.LittleEndian.PutUint32(dst[4*i:], x)
		}
	case []uint64:
		for i, x := range v {
			binary.LittleEndian.PutUint64(dst[8*i:], x)
		}
	}
	return nil
}

// aligned reports whether b starts at a multiple of T's size.
func aligned[T word](b []byte) bool {
	var z T
	return uintptr(unsafe.Pointer(unsafe.SliceData(b)))%unsafe.Sizeof(z) == 0
}

func checkWordBits(t uint64) error {
	if t != 8 && t != 16 && t != 32 && t != 64 {
		return unsupportedErr("bitpacking of %d-bit values is not supported", t)
	}
	return nil
}

// bitpackedChunks returns the word size and FastLanes chunk count of n
// t-bit bitpacked values, refusing a buffer b too short to hold them
// before anything is allocated for them.
func bitpackedChunks(b []byte, n, t uint64) (sz, chunks uint64, err error) {
	if err := checkWordBits(t); err != nil {
		return 0, 0, err
	}
	sz = t / 8
	chunks = (n + flChunk - 1) / flChunk
	if chunks > uint64(len(b))/sz+1 {
		return 0, 0, fmt.Errorf("%d values need %d bitpacked chunks, buffer has %d bytes", n, chunks, len(b))
	}
	return sz, chunks, nil
}

// inlineBitpacked decodes chunks of [T-bit width word][packed words].
func inlineBitpacked(b []byte, n, t uint64) (block, error) {
	sz, chunks, err := bitpackedChunks(b, n, t)
	if err != nil {
		return block{}, err
	}
	return inlineBitpackedInto(b, n, t, make([]byte, chunks*flChunk*sz))
}

// inlineBitpackedInto is inlineBitpacked unpacking into out, which holds
// at least whole FastLanes chunks for n values (intoLen); the block's data
// is out's first n values.
func inlineBitpackedInto(b []byte, n, t uint64, out []byte) (block, error) {
	sz, chunks, err := bitpackedChunks(b, n, t)
	if err != nil {
		return block{}, err
	}
	if uint64(len(out)) < chunks*flChunk*sz {
		return block{}, fmt.Errorf("%d bitpacked values need %d bytes, the buffer has %d", n, chunks*flChunk*sz, len(out))
	}
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
