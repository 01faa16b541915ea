package datafile

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

func roundTrip[T word](t *testing.T) {
	bits := bitsOf[T]()
	rng := rand.New(rand.NewPCG(uint64(bits), 7))
	for w := 0; w <= bits; w++ {
		in := make([]T, flChunk)
		for i := range in {
			v := rng.Uint64()
			if w < 64 {
				v &= 1<<w - 1
			}
			in[i] = T(v)
		}
		// The extremes of the width must survive too.
		if w > 0 {
			in[0], in[flChunk-1] = T(^uint64(0)>>(64-w)), 0
		}
		packed := make([]T, flWords(w, bits))
		flPack(w, in, packed)
		out := make([]T, flChunk)
		if err := flUnpack(w, packed, out); err != nil {
			t.Fatalf("%d-bit width %d: %v", bits, w, err)
		}
		for i := range in {
			if in[i] != out[i] {
				t.Fatalf("%d-bit width %d: value %d is %d, want %d", bits, w, i, out[i], in[i])
			}
		}
	}
}

// TestFastLanesRoundTrip packs and unpacks every width of every word size.
func TestFastLanesRoundTrip(t *testing.T) {
	roundTrip[uint8](t)
	roundTrip[uint16](t)
	roundTrip[uint32](t)
	roundTrip[uint64](t)
}

// TestFastLanesLayout pins the transposed layout independently of flPack:
// with width 1 and 32-bit words, value v sits in lane v%32 ... as FastLanes
// orders it (row r of lane l holds value order[r/8]*16+(r%8)*128+l).
func TestFastLanesLayout(t *testing.T) {
	in := make([]uint32, flWords(1, 32))
	// Set bit r of word 0 of lane 3: that is row r of lane 3.
	in[3] = 1<<0 | 1<<9
	out := make([]uint32, flChunk)
	if err := flUnpack(1, in, out); err != nil {
		t.Fatal(err)
	}
	want := map[int]bool{3: true, 4*16 + 1*128 + 3: true}
	for i, v := range out {
		if (v == 1) != want[i] {
			t.Fatalf("value %d is %d", i, v)
		}
	}
}

func TestFastLanesErrors(t *testing.T) {
	out := make([]uint16, flChunk)
	if err := flUnpack(17, make([]uint16, 1088), out); err == nil {
		t.Fatal("width 17 of 16-bit values accepted")
	}
	if err := flUnpack(3, make([]uint16, 10), out); err == nil {
		t.Fatal("short input accepted")
	}
}

// TestInlineBitpacked builds a two-chunk inline-bitpacked buffer.
func TestInlineBitpacked(t *testing.T) {
	vals := make([]uint32, 1500)
	for i := range vals {
		vals[i] = uint32(i * 3 % 1000)
	}
	var buf []byte
	for c := 0; c < 2; c++ {
		chunk := make([]uint32, flChunk)
		copy(chunk, vals[c*flChunk:min(len(vals), (c+1)*flChunk)])
		w := 10
		buf = binary.LittleEndian.AppendUint32(buf, uint32(w))
		packed := make([]uint32, flWords(w, 32))
		flPack(w, chunk, packed)
		for _, p := range packed {
			buf = binary.LittleEndian.AppendUint32(buf, p)
		}
	}
	b, err := inlineBitpacked(buf, uint64(len(vals)), 32)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		if got := binary.LittleEndian.Uint32(b.data[4*i:]); got != v {
			t.Fatalf("value %d: %d, want %d", i, got, v)
		}
	}
	if _, err := inlineBitpacked(buf[:100], uint64(len(vals)), 32); err == nil {
		t.Fatal("truncated buffer accepted")
	}
	bad := append([]byte(nil), buf...)
	bad[0] = 40
	if _, err := inlineBitpacked(bad, uint64(len(vals)), 32); err == nil {
		t.Fatal("width 40 of 32-bit values accepted")
	}
}

// TestOutOfLineBitpacked covers both tail forms: padded packed and raw.
func TestOutOfLineBitpacked(t *testing.T) {
	n := 1030
	vals := make([]uint16, n)
	for i := range vals {
		vals[i] = uint16(i % 4)
	}
	w := 2
	packChunk := func(v []uint16) []byte {
		chunk := make([]uint16, flChunk)
		copy(chunk, v)
		packed := make([]uint16, flWords(w, 16))
		flPack(w, chunk, packed)
		var out []byte
		for _, p := range packed {
			out = binary.LittleEndian.AppendUint16(out, p)
		}
		return out
	}
	whole := packChunk(vals[:flChunk])
	raw := append([]byte(nil), whole...)
	for _, v := range vals[flChunk:] {
		raw = binary.LittleEndian.AppendUint16(raw, v)
	}
	padded := append(append([]byte(nil), whole...), packChunk(vals[flChunk:])...)
	for name, buf := range map[string][]byte{"raw": raw, "padded": padded} {
		b, err := outOfLineBitpacked(buf, uint64(n), 16, uint64(w))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, v := range vals {
			if got := binary.LittleEndian.Uint16(b.data[2*i:]); got != v {
				t.Fatalf("%s value %d: %d, want %d", name, i, got, v)
			}
		}
	}
	if _, err := outOfLineBitpacked(raw[:len(raw)-1], uint64(n), 16, uint64(w)); err == nil {
		t.Fatal("odd tail accepted")
	}
}
