package datawriter

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
)

// fsstDecode expands codes with a serialized table the way Lance's decoder
// reads it (header word, then the symbols, then their lengths), so the
// table layout is checked along with the codes.
func fsstDecode(t testing.TB, table, codes []byte) []byte {
	t.Helper()
	if len(table) != fsstTableBytes {
		t.Fatalf("table of %d bytes", len(table))
	}
	h := binary.LittleEndian.Uint64(table)
	if h>>32 != fsstMagic || h&(1<<24) == 0 {
		t.Fatalf("table header %#x", h)
	}
	n := int(h & 0xFF)
	var out []byte
	for i := 0; i < len(codes); i++ {
		c := int(codes[i])
		if c == fsstEscape {
			i++
			if i == len(codes) {
				t.Fatalf("escape at the end")
			}
			out = append(out, codes[i])
			continue
		}
		if c >= n {
			t.Fatalf("code %d of %d symbols", c, n)
		}
		l := int(table[8+8*n+c])
		if l < 1 || l > 8 {
			t.Fatalf("symbol %d of length %d", c, l)
		}
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], binary.LittleEndian.Uint64(table[8+8*c:]))
		out = append(out, w[:l]...)
	}
	return out
}

// fsstRoundTrip trains on values, compresses each and checks it expands
// back; it returns the compressed bytes.
func fsstRoundTrip(t testing.TB, values [][]byte) int {
	tbl := trainFSST(values)
	if len(tbl.syms) > fsstMaxSymbols {
		t.Fatalf("%d symbols", len(tbl.syms))
	}
	ser := tbl.serialize()
	total := 0
	for _, v := range values {
		c := tbl.appendCompressed(nil, v)
		total += len(c)
		if got := fsstDecode(t, ser, c); !bytes.Equal(got, v) {
			t.Fatalf("%q compressed to %x expands to %q", v, c, got)
		}
	}
	return total
}

// TestFSSTRoundTrip compresses text, every byte value and empty strings,
// and checks that text shrinks.
func TestFSSTRoundTrip(t *testing.T) {
	var text [][]byte
	plain := 0
	for i := range 3000 {
		v := []byte(fmt.Sprintf("row-%08d-%08x-lorem-ipsum-dol", i, uint32(i)*2654435761))
		text = append(text, v)
		plain += len(v)
	}
	if got := fsstRoundTrip(t, text); got > plain/2 {
		t.Errorf("text of %d bytes compressed to %d", plain, got)
	}
	var bin [][]byte
	for i := range 256 {
		bin = append(bin, []byte{byte(i), byte(255 - i), 0, 255}, nil, bytes.Repeat([]byte{byte(i)}, i%17))
	}
	fsstRoundTrip(t, bin)
	fsstRoundTrip(t, nil)
}

// FuzzFSST trains on fuzzed values and checks every value round-trips.
func FuzzFSST(f *testing.F) {
	f.Add([]byte("hello world, hello fsst"), []byte{0, 255, 1})
	f.Add([]byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), []byte("ab"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		vals := [][]byte{a, b, append(append([]byte{}, a...), b...)}
		for i := 0; i+3 <= len(a); i += 3 {
			vals = append(vals, a[i:i+3])
		}
		fsstRoundTrip(t, vals)
	})
}
