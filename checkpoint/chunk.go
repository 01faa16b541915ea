package checkpoint

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// A kept source state is stored in content-defined chunks, so that a state
// written again after one more source commit writes only the chunks that
// commit changed. A state is mostly the source's manifest (one entry per
// fragment, in order), so one commit changes a few chunks of it: the
// fragment entries it added or changed and the header. Written whole, a
// 5,000-fragment source's state is ~0.6 MiB per view per write; chunked,
// a few tens of KiB.
//
// Boundaries come from a gear rolling hash over the bytes, so they move
// with the content: an insertion changes the chunks around it, not every
// chunk after it.
const (
	chunkMin = 2 << 10  // no boundary before this many bytes
	chunkMax = 32 << 10 // a boundary here at the latest
	// chunkMask picks the hash's top 12 bits, which depend on the last
	// 64 bytes (the low bits only on the last few): a boundary about
	// every 4 KiB past chunkMin.
	chunkMask = (1<<12 - 1) << 52
	// chunkIDSize is the length of a chunk's id, a prefix of the SHA-256
	// of its bytes.
	chunkIDSize = 16
)

// gear is the rolling hash's table: 256 fixed pseudo-random words
// (splitmix64 from a fixed seed), so that boundaries are the same in every
// build and process. It is never written after initialization.
var gear = func() (t [256]uint64) {
	x := uint64(0x6d76645f63686e6b) // "mvd_chnk"
	for i := range t {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		t[i] = z ^ (z >> 31)
	}
	return t
}()

// chunkBounds returns the end offsets of b's chunks (the last is len(b));
// nil for an empty b.
func chunkBounds(b []byte) []int {
	var ends []int
	for start := 0; start < len(b); {
		end := min(start+chunkMax, len(b))
		var h uint64
		for i := start + chunkMin; i < end; i++ {
			h = h<<1 + gear[b[i]]
			if h&chunkMask == 0 {
				end = i + 1
				break
			}
		}
		ends = append(ends, end)
		start = end
	}
	return ends
}

// chunkID names a chunk by its content.
type chunkID [chunkIDSize]byte

func idOf(b []byte) chunkID {
	sum := sha256.Sum256(b)
	return chunkID(sum[:chunkIDSize])
}

// chunkRef is one chunk of a state, in order.
type chunkRef struct {
	id   chunkID
	size int
}

// stateIndex is what a chunked state's index key holds: its chunks in
// order. Encoded: indexMagic, uvarint count, then per chunk its id and
// uvarint size.
type stateIndex []chunkRef

const indexMagic = "mvdIDX1\n"

var errIndexDamaged = errors.New("checkpoint: kept source state's chunk index is damaged")

func (x stateIndex) encode() []byte {
	b := make([]byte, 0, len(indexMagic)+binary.MaxVarintLen64+len(x)*(chunkIDSize+3))
	b = append(b, indexMagic...)
	b = binary.AppendUvarint(b, uint64(len(x)))
	for _, c := range x {
		b = append(b, c.id[:]...)
		b = binary.AppendUvarint(b, uint64(c.size))
	}
	return b
}

func decodeIndex(b []byte) (stateIndex, error) {
	if len(b) < len(indexMagic) || string(b[:len(indexMagic)]) != indexMagic {
		return nil, errIndexDamaged
	}
	b = b[len(indexMagic):]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b))/(chunkIDSize+1) {
		return nil, errIndexDamaged
	}
	b = b[k:]
	x := make(stateIndex, 0, n)
	for range n {
		if len(b) < chunkIDSize {
			return nil, errIndexDamaged
		}
		var c chunkRef
		copy(c.id[:], b)
		size, k := binary.Uvarint(b[chunkIDSize:])
		if k <= 0 || size == 0 || size > chunkMax {
			return nil, errIndexDamaged
		}
		c.size = int(size)
		b = b[chunkIDSize+k:]
		x = append(x, c)
	}
	if len(b) != 0 {
		return nil, errIndexDamaged
	}
	return x, nil
}

// split cuts b into chunks: the index and each chunk's bytes by id (a
// chunk that repeats is listed once in the map).
func split(b []byte) (stateIndex, map[chunkID][]byte) {
	ends := chunkBounds(b)
	x := make(stateIndex, 0, len(ends))
	parts := make(map[chunkID][]byte, len(ends))
	start := 0
	for _, end := range ends {
		c := b[start:end]
		id := idOf(c)
		x = append(x, chunkRef{id: id, size: len(c)})
		parts[id] = c
		start = end
	}
	return x, parts
}

// assemble joins the chunks of x, read by get, checking each against its
// id: a damaged or missing chunk fails rather than give other bytes.
func assemble(x stateIndex, get func(chunkID) ([]byte, error)) ([]byte, error) {
	total := 0
	for _, c := range x {
		total += c.size
	}
	out := make([]byte, 0, total)
	for i, c := range x {
		b, err := get(c.id)
		if err != nil {
			return nil, fmt.Errorf("chunk %d of %d: %w", i+1, len(x), err)
		}
		if len(b) != c.size || idOf(b) != c.id {
			return nil, fmt.Errorf("chunk %d of %d: %w", i+1, len(x), errChunkDamaged)
		}
		out = append(out, b...)
	}
	return out, nil
}

var errChunkDamaged = errors.New("checkpoint: a chunk of a kept source state is damaged")
