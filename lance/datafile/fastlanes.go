package datafile

import "fmt"

// flChunk is the number of values in one FastLanes chunk.
const flChunk = 1024

// flOrder is the FastLanes row permutation: row r of a lane holds value
// flOrder[r/8]*16 + (r%8)*128 + lane.
var flOrder = [8]int{0, 4, 2, 6, 1, 5, 3, 7}

// word is an unsigned integer type FastLanes packs.
type word interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

// flWords is the number of T-bit words one chunk of width w occupies.
func flWords(w, t int) int { return flChunk * w / t }

// flUnpack unpacks one FastLanes chunk of 1024 values of width w (0..T)
// from in (exactly flWords(w, T) words) into out (1024 values).
func flUnpack[T word](w int, in []T, out []T) error {
	t := bitsOf[T]()
	if w < 0 || w > t {
		return fmt.Errorf("bit width %d is out of range for %d-bit values", w, t)
	}
	if len(in) != flWords(w, t) || len(out) != flChunk {
		return fmt.Errorf("fastlanes chunk of width %d needs %d words, got %d", w, flWords(w, t), len(in))
	}
	lanes := flChunk / t
	if w == 0 {
		clear(out)
		return nil
	}
	mask := uint64(1)<<w - 1
	if w == 64 {
		mask = ^uint64(0)
	}
	// Row r of every lane comes from the same word row k at the same
	// shift: one pass over the lanes per row, the inner loop contiguous.
	k, sh := 0, 0
	for r := 0; r < t; r++ {
		src := in[lanes*k : lanes*k+lanes]
		dst := out[flOrder[r/8]*16+(r%8)*128:][:lanes]
		if sh+w > t {
			next := in[lanes*(k+1) : lanes*(k+1)+lanes]
			for l := range dst {
				dst[l] = T((uint64(src[l])>>sh | uint64(next[l])<<(t-sh)) & mask)
			}
		} else {
			for l := range dst {
				dst[l] = T(uint64(src[l]) >> sh & mask)
			}
		}
		if sh += w; sh >= t {
			sh -= t
			k++
		}
	}
	return nil
}

// flPack is the inverse of flUnpack; values must fit in w bits.
func flPack[T word](w int, in []T, out []T) {
	t := bitsOf[T]()
	lanes := flChunk / t
	clear(out)
	if w == 0 {
		return
	}
	for l := 0; l < lanes; l++ {
		for r := 0; r < t; r++ {
			v := uint64(in[flOrder[r/8]*16+(r%8)*128+l])
			p := r * w
			k, sh := p/t, p%t
			out[lanes*k+l] |= T(v << sh)
			if sh+w > t {
				out[lanes*(k+1)+l] |= T(v >> (t - sh))
			}
		}
	}
}

func bitsOf[T word]() int {
	var z T
	switch any(z).(type) {
	case uint8:
		return 8
	case uint16:
		return 16
	case uint32:
		return 32
	}
	return 64
}
