package datafile

import (
	"encoding/binary"
	"testing"
)

// fsstSeedTable is a serialized FSST table of the symbols given, laid
// out as Lance (and mvd's writer) store it.
func fsstSeedTable(syms ...string) []byte {
	t := make([]byte, fsstTableSize)
	binary.LittleEndian.PutUint64(t, fsstMagic<<32|1<<24|uint64(len(syms)))
	for i, s := range syms {
		copy(t[8+8*i:], s)
		t[8+8*len(syms)+i] = byte(len(s))
	}
	return t
}

// TestFSSTDecode expands codes, escapes included, with a table that has
// symbols of one to eight bytes.
func TestFSSTDecode(t *testing.T) {
	d, err := newFSST(fsstSeedTable("ab", "xyz", "12345678", "-"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.appendDecoded(nil, []byte{0, 1, 255, 0, 2, 3, 255, 255, 0})
	if err != nil {
		t.Fatal(err)
	}
	if want := "abxyz\x0012345678-\xffab"; string(got) != want {
		t.Fatalf("decoded %q, want %q", got, want)
	}
	for _, bad := range [][]byte{{4}, {255}, {0, 255}} {
		if _, err := d.appendDecoded(nil, bad); err == nil {
			t.Errorf("codes %v decoded without an error", bad)
		}
	}
}

// FuzzFSSTDecode feeds the FSST decoder fuzzed tables and codes: errors,
// never panics.
func FuzzFSSTDecode(f *testing.F) {
	f.Add(fsstSeedTable("ab", "xyz", "12345678"), []byte{0, 1, 255, 7, 2})
	f.Add(make([]byte, fsstTableSize), []byte("raw bytes"))
	f.Fuzz(func(t *testing.T, table, codes []byte) {
		d, err := newFSST(table)
		if err != nil {
			return
		}
		out, err := d.appendDecoded(nil, codes)
		if err == nil && len(out) > 8*len(codes) {
			t.Fatalf("%d codes expanded to %d bytes", len(codes), len(out))
		}
	})
}
