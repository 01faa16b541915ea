package lance

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// RefreshSentinel is the key LanceDB 0.39's materialized-view refresh adds
// to the inserted-rows filter of every data commit, so that any two
// refresh commits conflict in Lance's resolver whatever rows they wrote.
const RefreshSentinel = math.MaxUint64

// KeyFilter is the inserted-rows key filter of an Update transaction
// (Transaction.Update.inserted_rows, a KeyExistenceFilter): the keys of
// the rows the commit inserted, over one unsigned 64-bit column. Lance's
// commit resolver refuses to rebase an Update over another whose filter
// might hold a common key. Lance writes it as a split-block bloom filter
// of 8192 items at fpp 0.00057 (32 KiB), and so does mvd.
type KeyFilter struct {
	// Column is the top-level uint64 column the keys are values of, e.g.
	// "__source_row_id".
	Column string
	// Keys are the inserted keys.
	Keys *roaring64.Bitmap

	bloom []byte // Prepare's; nil: built when needed
}

// Prepare builds the filter's bloom bitmap now rather than during the
// commit (hashing every key costs about 25 ns each), so that a caller can
// do it beside other work, e.g. while its data files are being finished.
// Keys must not change afterwards. It is not safe to call concurrently
// with a commit of the filter.
func (f *KeyFilter) Prepare() { f.bloom = keyBloom(f.Keys) }

// bitmap returns the bloom bitmap of the filter's keys.
func (f *KeyFilter) bitmap() []byte {
	if f.bloom != nil {
		return f.bloom
	}
	return keyBloom(f.Keys)
}

// RefreshKeyFilter is the filter a view refresh commits, as LanceDB's
// does: every provenance id written plus RefreshSentinel.
func RefreshKeyFilter(column string, written *roaring64.Bitmap) *KeyFilter {
	keys := roaring64.New()
	if written != nil {
		keys.Or(written)
	}
	keys.Add(RefreshSentinel)
	return &KeyFilter{Column: column, Keys: keys}
}

// Bloom filter parameters as Lance writes them (key_existence.rs).
const (
	bloomItems       = 8192
	bloomProbability = 0.00057
	bloomBytes       = 32768 // what SBBF sizing gives for the two above
)

// sbbfSalt is the Parquet split-block bloom filter salt.
var sbbfSalt = [8]uint32{0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31}

// sbbf is a split-block bloom filter: blocks of eight 32-bit words.
type sbbf []uint32

func newSBBF(numBytes int) sbbf { return make(sbbf, numBytes/4) }

// insertU64 inserts a uint64 key as Lance hashes it: xxHash64 (seed 0) of
// its 8 little-endian bytes.
func (f sbbf) insertU64(k uint64) {
	h := xxhash64U64(k)
	blocks := uint64(len(f) / 8)
	blk := (*[8]uint32)(f[(((h>>32)*blocks)>>32)*8:])
	x := uint32(h)
	for i := range blk {
		blk[i] |= 1 << ((x * sbbfSalt[i]) >> 27)
	}
}

func (f sbbf) bytes() []byte {
	out := make([]byte, 4*len(f))
	for i, w := range f {
		binary.LittleEndian.PutUint32(out[4*i:], w)
	}
	return out
}

// mightIntersect reports whether two filter bitmaps share a set bit, as
// Lance's resolver decides.
func bloomMightIntersect(a, b []byte) bool {
	if len(a) != len(b) {
		return true // different configurations cannot be compared: assume so
	}
	for i := range a {
		if a[i]&b[i] != 0 {
			return true
		}
	}
	return false
}

// Field numbers of the messages below (lance-format/lance
// protos/transaction.proto). The generated tablepb predates field 8 of
// Update, so it is encoded and read with protowire as an unknown field.
const (
	updateInsertedRows = 8 // Update.inserted_rows: KeyExistenceFilter
	kefFieldIDs        = 1 // KeyExistenceFilter.field_ids (packed int32)
	kefBloom           = 3 // KeyExistenceFilter.bloom: BloomFilter
	bloomBitmap        = 1 // BloomFilter.bitmap
	bloomNumBits       = 2 // BloomFilter.num_bits
	bloomNumItems      = 3 // BloomFilter.number_of_items
	bloomProb          = 4 // BloomFilter.probability (double)
)

// encodeKeyFilter returns the KeyExistenceFilter bytes for the keys of f,
// values of field id.
func encodeKeyFilter(fieldID int32, f *KeyFilter) []byte {
	var bloom []byte
	bitmap := f.bitmap()
	bloom = protowire.AppendTag(bloom, bloomBitmap, protowire.BytesType)
	bloom = protowire.AppendBytes(bloom, bitmap)
	bloom = protowire.AppendTag(bloom, bloomNumBits, protowire.VarintType)
	bloom = protowire.AppendVarint(bloom, bloomBytes*8)
	bloom = protowire.AppendTag(bloom, bloomNumItems, protowire.VarintType)
	bloom = protowire.AppendVarint(bloom, bloomItems)
	bloom = protowire.AppendTag(bloom, bloomProb, protowire.Fixed64Type)
	bloom = protowire.AppendFixed64(bloom, math.Float64bits(bloomProbability))

	var ids []byte
	ids = protowire.AppendVarint(ids, uint64(fieldID))
	var kef []byte
	kef = protowire.AppendTag(kef, kefFieldIDs, protowire.BytesType)
	kef = protowire.AppendBytes(kef, ids)
	kef = protowire.AppendTag(kef, kefBloom, protowire.BytesType)
	kef = protowire.AppendBytes(kef, bloom)
	return kef
}

// setInsertedRows attaches a KeyExistenceFilter to an Update operation.
func setInsertedRows(u *tablepb.Transaction_Update, kef []byte) {
	var raw []byte
	raw = protowire.AppendTag(raw, updateInsertedRows, protowire.BytesType)
	raw = protowire.AppendBytes(raw, kef)
	m := u.ProtoReflect()
	m.SetUnknown(append(m.GetUnknown(), raw...))
}

// insertedRowsBloom returns the bloom bitmap of an Update's inserted-rows
// filter, whether it has one, and whether it is in a form mvd cannot
// compare (an exact hash set), which counts as intersecting anything.
func insertedRowsBloom(u *tablepb.Transaction_Update) (bitmap []byte, ok, opaque bool, err error) {
	kef, found, err := unknownField(u.ProtoReflect().GetUnknown(), updateInsertedRows)
	if err != nil || !found {
		return nil, false, false, err
	}
	bloom, found, err := unknownField(kef, kefBloom)
	if err != nil {
		return nil, false, false, err
	}
	if !found {
		return nil, true, true, nil // exact key-hash set: Lance hashes differently
	}
	bitmap, _, err = unknownField(bloom, bloomBitmap)
	return bitmap, true, false, err
}

// unknownField returns the last bytes-typed field num of a raw message.
func unknownField(b []byte, num protowire.Number) (out []byte, found bool, err error) {
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, false, corruptf("transaction key filter: %v", protowire.ParseError(l))
		}
		b = b[l:]
		if n == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(b)
			if l < 0 {
				return nil, false, corruptf("transaction key filter: %v", protowire.ParseError(l))
			}
			out, found = v, true
			b = b[l:]
			continue
		}
		l = protowire.ConsumeFieldValue(n, typ, b)
		if l < 0 {
			return nil, false, corruptf("transaction key filter: %v", protowire.ParseError(l))
		}
		b = b[l:]
	}
	return out, found, nil
}

// keyFilterFieldID resolves the filter's column in the schema: a
// top-level uint64 field.
func keyFilterFieldID(s *Schema, kf *KeyFilter) (int32, error) {
	f := s.FieldByName(kf.Column)
	if f == nil {
		return 0, fmt.Errorf("key filter column %q is not in the schema (columns: %s)", kf.Column, s.ColumnList())
	}
	if f.LogicalType != "uint64" {
		return 0, fmt.Errorf("key filter column %q is %s, not uint64", kf.Column, f.LogicalType)
	}
	return f.ID, nil
}

// insertedRowsBloom returns the bloom bitmap of the commit's key filter.
func (c *Commit) insertedRowsBloom() []byte { return c.InsertedRows.bitmap() }

// keyBloom returns the bloom filter bitmap of keys, as Lance builds it.
func keyBloom(keys *roaring64.Bitmap) []byte {
	f := newSBBF(bloomBytes)
	it := keys.ManyIterator()
	var buf [1024]uint64
	for n := it.NextMany(buf[:]); n > 0; n = it.NextMany(buf[:]) {
		for _, k := range buf[:n] {
			f.insertU64(k)
		}
	}
	return f.bytes()
}

// xxHash64 primes.
const (
	xxPrime1 uint64 = 0x9E3779B185EBCA87
	xxPrime2 uint64 = 0xC2B2AE3D27D4EB4F
	xxPrime3 uint64 = 0x165667B19E3779F9
	xxPrime4 uint64 = 0x85EBCA77C2B2AE63
	xxPrime5 uint64 = 0x27D4EB2F165667C5
)

// xxhash64U64 is xxhash.Sum64 of k's 8 little-endian bytes with seed 0,
// unrolled for that one length (a refresh hashes every row it writes).
func xxhash64U64(k uint64) uint64 {
	k1 := bits.RotateLeft64(k*xxPrime2, 31) * xxPrime1
	h := (xxPrime5 + 8) ^ k1
	h = bits.RotateLeft64(h, 27)*xxPrime1 + xxPrime4
	h ^= h >> 33
	h *= xxPrime2
	h ^= h >> 29
	h *= xxPrime3
	h ^= h >> 32
	return h
}
