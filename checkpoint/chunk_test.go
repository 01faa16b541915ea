package checkpoint

import (
	"bytes"
	"math/rand"
	"slices"
	"testing"
)

func randomBytes(seed int64, n int) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

// TestChunkBounds: chunks cover the bytes in order, each between chunkMin
// and chunkMax bytes (the last may be shorter), the same for the same
// bytes.
func TestChunkBounds(t *testing.T) {
	for _, tc := range []struct {
		name       string
		b          []byte
		wantChunks int // 0: any
	}{
		{"empty", nil, 0},
		{"one byte", []byte{1}, 1},
		{"below the minimum", randomBytes(1, chunkMin-1), 1},
		{"zeros", make([]byte, 5*chunkMax+7), 6},
		{"random", randomBytes(2, 1<<20), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ends := chunkBounds(tc.b)
			if len(tc.b) == 0 {
				if ends != nil {
					t.Fatalf("chunks of nothing: %v", ends)
				}
				return
			}
			if tc.wantChunks > 0 && len(ends) != tc.wantChunks {
				t.Errorf("%d chunks, want %d", len(ends), tc.wantChunks)
			}
			start := 0
			for i, end := range ends {
				n := end - start
				if n <= 0 || n > chunkMax || (n < chunkMin && i != len(ends)-1) {
					t.Fatalf("chunk %d of %d is %d bytes", i, len(ends), n)
				}
				start = end
			}
			if start != len(tc.b) {
				t.Fatalf("chunks end at %d of %d bytes", start, len(tc.b))
			}
			again := chunkBounds(append([]byte(nil), tc.b...))
			if !slices.Equal(again, ends) {
				t.Fatalf("the same bytes chunked differently")
			}
		})
	}
	// About one boundary every 4 KiB past the minimum: a random MiB in
	// 100-250 chunks, not cut at chunkMax (a hash that never matched).
	if n := len(chunkBounds(randomBytes(3, 1<<20))); n < 100 || n > 250 {
		t.Errorf("a random MiB in %d chunks, want 100-250", n)
	}
}

// TestChunksFollowContent: an edit changes the chunks around it, not the
// ones after it: what makes a state written again after one more source
// commit cost a few chunks.
func TestChunksFollowContent(t *testing.T) {
	base := randomBytes(4, 600<<10)
	edits := []struct {
		name string
		edit func([]byte) []byte
	}{
		{"header changed", func(b []byte) []byte { b[3] ^= 0xff; return b }},
		{"inserted in the middle", func(b []byte) []byte {
			return append(b[:300<<10:300<<10], append(randomBytes(5, 117), b[300<<10:]...)...)
		}},
		{"removed in the middle", func(b []byte) []byte { return append(b[:200<<10:200<<10], b[200<<10+90:]...) }},
		{"appended", func(b []byte) []byte { return append(b, randomBytes(6, 300)...) }},
	}
	x0, _ := split(base)
	old := map[chunkID]bool{}
	for _, c := range x0 {
		old[c.id] = true
	}
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			b := e.edit(append([]byte(nil), base...))
			x, parts := split(b)
			newBytes := 0
			for id, c := range parts {
				if !old[id] {
					newBytes += len(c)
				}
			}
			if newBytes > 3*chunkMax {
				t.Errorf("%d of %d bytes in new chunks after one edit, want at most %d", newBytes, len(b), 3*chunkMax)
			}
			got, err := assemble(x, func(id chunkID) ([]byte, error) { return parts[id], nil })
			if err != nil || !bytes.Equal(got, b) {
				t.Fatalf("assembled %d bytes, %v; want the %d split", len(got), err, len(b))
			}
		})
	}
}

// TestAssembleRefusesDamage: a chunk that is missing, changed or of
// another length fails the whole state.
func TestAssembleRefusesDamage(t *testing.T) {
	b := randomBytes(7, 100<<10)
	x, parts := split(b)
	victim := x[len(x)/2].id
	for name, get := range map[string]func(chunkID) ([]byte, error){
		"changed": func(id chunkID) ([]byte, error) {
			c := append([]byte(nil), parts[id]...)
			if id == victim {
				c[0] ^= 1
			}
			return c, nil
		},
		"shorter": func(id chunkID) ([]byte, error) {
			if id == victim {
				return parts[id][1:], nil
			}
			return parts[id], nil
		},
		"missing": func(id chunkID) ([]byte, error) {
			if id == victim {
				return nil, ErrNotFound
			}
			return parts[id], nil
		},
	} {
		if got, err := assemble(x, get); err == nil {
			t.Errorf("%s chunk: assembled %d bytes, want an error", name, len(got))
		}
	}
}

// TestStateIndexEncoding: an index reads back as written; damaged
// encodings fail.
func TestStateIndexEncoding(t *testing.T) {
	x, _ := split(randomBytes(8, 50<<10))
	got, err := decodeIndex(x.encode())
	if err != nil || len(got) != len(x) {
		t.Fatalf("decoded %d chunks, %v; want %d", len(got), err, len(x))
	}
	for i := range x {
		if got[i] != x[i] {
			t.Fatalf("chunk %d: %+v, want %+v", i, got[i], x[i])
		}
	}
	if empty, err := decodeIndex(stateIndex{}.encode()); err != nil || len(empty) != 0 {
		t.Errorf("empty index: %v, %v", empty, err)
	}
	enc := x.encode()
	for name, b := range map[string][]byte{
		"nothing":   nil,
		"magic":     append([]byte("mvdIDX2\n"), enc[len(indexMagic):]...),
		"truncated": enc[:len(enc)-1],
		"trailing":  append(append([]byte(nil), enc...), 0),
		"count":     append([]byte(indexMagic), 0xff, 0xff, 0xff, 0xff, 0x0f),
	} {
		if _, err := decodeIndex(b); err == nil {
			t.Errorf("%s: decoded, want an error", name)
		}
	}
}

// FuzzDecodeIndex: any bytes decode to an index or an error, never a
// panic; an index decoded encodes to bytes that decode to it again.
func FuzzDecodeIndex(f *testing.F) {
	x, _ := split(randomBytes(9, 20<<10))
	f.Add(x.encode())
	f.Add([]byte(indexMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := decodeIndex(b)
		if err != nil {
			return
		}
		y, err := decodeIndex(x.encode())
		if err != nil || len(y) != len(x) {
			t.Fatalf("decoded index re-encoded: %d chunks, %v; want %d", len(y), err, len(x))
		}
		for i := range x {
			if y[i] != x[i] {
				t.Fatalf("chunk %d re-encoded as %+v, want %+v", i, y[i], x[i])
			}
		}
	})
}
