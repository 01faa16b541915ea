package datafile

import (
	"math/rand/v2"
	"testing"
)

// randomAccess checks fastLanesAt against flPack for every width of T.
func randomAccess[T word](t *testing.T) {
	bits := bitsOf[T]()
	sz := uint64(bits / 8)
	rng := rand.New(rand.NewPCG(uint64(bits), 11))
	for w := 1; w <= bits; w++ {
		in := make([]T, flChunk)
		for i := range in {
			v := rng.Uint64()
			if w < 64 {
				v &= 1<<w - 1
			}
			in[i] = T(v)
		}
		packed := make([]T, flWords(w, bits))
		flPack(w, in, packed)
		raw := make([]byte, uint64(len(packed))*sz)
		for i, p := range packed {
			putWord(raw[uint64(i)*sz:], uint64(p), sz)
		}
		for j := range uint64(flChunk) {
			if got := fastLanesAt(raw, j, uint64(w), uint64(bits), flChunk/uint64(bits)); got != uint64(in[j]) {
				t.Fatalf("%d-bit width %d: value %d is %d, want %d", bits, w, j, got, in[j])
			}
		}
	}
}

// TestFastLanesAt reads single values of every width of every word size.
func TestFastLanesAt(t *testing.T) {
	randomAccess[uint8](t)
	randomAccess[uint16](t)
	randomAccess[uint32](t)
	randomAccess[uint64](t)
}

// TestTakeBitpackedMatchesUnpack: rows gathered from an inline bitpacked
// buffer (groups of different widths, a short last group) equal the
// unpacked values.
func TestTakeBitpackedMatchesUnpack(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, bits := range []uint64{8, 16, 32, 64} {
		sz := bits / 8
		n := uint64(3*flChunk + 200)
		var buf []byte
		for g := uint64(0); g < (n+flChunk-1)/flChunk; g++ {
			w := []uint64{0, 1, bits / 2, bits}[g%4]
			vals := make([]uint64, flChunk)
			for i := range vals {
				if w > 0 {
					vals[i] = rng.Uint64() >> (64 - w)
				}
			}
			word := make([]byte, sz)
			putWord(word, w, sz)
			buf = append(buf, word...)
			buf = append(buf, packWords(vals, int(w), int(bits))...)
		}
		want, err := inlineBitpacked(buf, n, bits)
		if err != nil {
			t.Fatal(err)
		}
		var rows []uint64
		for r := uint64(0); r < n; r += 1 + uint64(rng.IntN(7)) {
			rows = append(rows, r)
		}
		dst := block{bits: bits}
		ok, err := takeBitpacked(buf, n, bits, rows, &dst)
		if err != nil || !ok {
			t.Fatalf("%d bits: %v %v", bits, ok, err)
		}
		for i, r := range rows {
			if got, w := readWord(dst.data[uint64(i)*sz:], sz), readWord(want.data[r*sz:], sz); got != w {
				t.Fatalf("%d bits row %d: %d, want %d", bits, r, got, w)
			}
		}
	}
}

// packWords packs 1024 values with flPack of the given word size.
func packWords(vals []uint64, w, bits int) []byte {
	switch bits {
	case 8:
		return packAs[uint8](vals, w)
	case 16:
		return packAs[uint16](vals, w)
	case 32:
		return packAs[uint32](vals, w)
	}
	return packAs[uint64](vals, w)
}

func packAs[T word](vals []uint64, w int) []byte {
	in := make([]T, flChunk)
	for i, v := range vals {
		in[i] = T(v)
	}
	out := make([]T, flWords(w, bitsOf[T]()))
	flPack(w, in, out)
	sz := bitsOf[T]() / 8
	b := make([]byte, len(out)*sz)
	for i, x := range out {
		putWord(b[i*sz:], uint64(x), uint64(sz))
	}
	return b
}
