package lance

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/cespare/xxhash/v2"
)

// TestXXHash64U64 checks the unrolled key hash against the library's
// xxHash64 of the key's 8 little-endian bytes.
func TestXXHash64U64(t *testing.T) {
	keys := []uint64{0, 1, 2, 255, 256, 1 << 32, math.MaxUint32, RefreshSentinel, RefreshSentinel - 1}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		keys = append(keys, rng.Uint64(), rng.Uint64N(1<<24))
	}
	var b [8]byte
	for _, k := range keys {
		binary.LittleEndian.PutUint64(b[:], k)
		if got, want := xxhash64U64(k), xxhash.Sum64(b[:]); got != want {
			t.Fatalf("key %d: hash %#x, want %#x", k, got, want)
		}
	}
}

// TestKeyBloomBatches checks that the batched walk of the keys inserts
// every key: a filter built key by key is the same.
func TestKeyBloomBatches(t *testing.T) {
	keys := roaring64.New()
	keys.AddRange(1000, 1000+5000) // more than one batch
	keys.AddMany([]uint64{7, 1 << 40, RefreshSentinel})
	want := newSBBF(bloomBytes)
	for _, k := range keys.ToArray() {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], k)
		h := xxhash.Sum64(b[:])
		blocks := uint64(len(want) / 8)
		blk := want[(((h>>32)*blocks)>>32)*8:][:8]
		for i := range blk {
			blk[i] |= 1 << ((uint32(h) * sbbfSalt[i]) >> 27)
		}
	}
	if got := keyBloom(keys); string(got) != string(want.bytes()) {
		t.Fatal("batched key filter differs from one built key by key")
	}
}

func BenchmarkKeyBloom100k(b *testing.B) {
	keys := roaring64.New()
	keys.AddRange(5_000_000, 5_100_000)
	keys.Add(RefreshSentinel)
	for range b.N {
		keyBloom(keys)
	}
}
