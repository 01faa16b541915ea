package datawriter

import (
	"encoding/binary"
	"math"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// FSST (Fast Static Symbol Table) compression of string pages, as LanceDB
// 0.39 compresses 2.2 mini-block strings: a table of up to 255 symbols of
// 1-8 bytes, learnt from a sample of the page, replaces each string's
// bytes by one-byte codes (255 escapes a byte not covered). The table is
// stored in the page's encoding (lance-format.md; mvd's decoder:
// lance/datafile/codecs.go), the codes are the page's values in the usual
// Variable chunks. Text with shared prefixes, words and digits shrinks to
// about a third.
//
// The symbol table is learnt as the FSST paper describes (Boncz, Neumann,
// Leis, VLDB 2020): a few rounds, each compressing the sample with the
// current table, counting how often each symbol and each pair of
// consecutive symbols occurs, and keeping the 255 candidates (symbols and
// concatenations of two) that cover the most bytes.

const (
	fsstTableBytes = 8 + 256*8 + 256 // the serialized table, always this size
	fsstMagic      = 0x46535354      // "FSST", the header's top 32 bits
	fsstEscape     = 255
	fsstMaxSymbols = 255
	fsstRounds     = 5
	fsstSampleSize = 16 << 10
	fsstHashSlots  = 1 << 12
	// fsstMinPageBytes and fsstMinMaxLen are when LanceDB considers
	// FSST: pages of 32 KiB of strings and more, some of 5 bytes or more.
	fsstMinPageBytes = 32 << 10
	fsstMinMaxLen    = 5
)

// fsstSym is one symbol: its bytes, little-endian in val, and length n.
type fsstSym struct {
	val uint64
	n   uint8
}

// fsstSlot is a hash slot for a symbol of 3+ bytes; code -1: empty.
type fsstSlot struct {
	val  uint64
	n    uint8
	code int16
}

// fsstTable is a symbol table with the lookups its compressor needs.
type fsstTable struct {
	syms []fsstSym
	one  [256]int16     // code of the 1-byte symbol b, or -1
	two  [1 << 16]int16 // code of the 2-byte symbol b0|b1<<8, or -1
	long [fsstHashSlots]fsstSlot
}

func (t *fsstTable) reset() {
	t.syms = t.syms[:0]
	for i := range t.one {
		t.one[i] = -1
	}
	for i := range t.two {
		t.two[i] = -1
	}
	for i := range t.long {
		t.long[i] = fsstSlot{code: -1}
	}
}

// fsstHash spreads the first three bytes of a word over the hash slots.
func fsstHash(w uint64) int {
	h := (w & 0xFFFFFF) * 2971215073
	return int((h ^ h>>15) & (fsstHashSlots - 1))
}

// symMask keeps the low n bytes of a word.
func symMask(n uint8) uint64 {
	if n >= 8 {
		return ^uint64(0)
	}
	return 1<<(8*uint(n)) - 1
}

// add appends s to the table; false when the table is full or s's lookup
// place is taken (a 3+ byte symbol whose hash slot holds another).
func (t *fsstTable) add(s fsstSym) bool {
	if len(t.syms) >= fsstMaxSymbols {
		return false
	}
	code := int16(len(t.syms))
	switch {
	case s.n == 1:
		if t.one[s.val&0xFF] >= 0 {
			return false
		}
		t.one[s.val&0xFF] = code
	case s.n == 2:
		if t.two[s.val&0xFFFF] >= 0 {
			return false
		}
		t.two[s.val&0xFFFF] = code
	default:
		h := fsstHash(s.val)
		if t.long[h].code >= 0 {
			return false
		}
		t.long[h] = fsstSlot{val: s.val, n: s.n, code: code}
	}
	t.syms = append(t.syms, s)
	return true
}

// load8 reads up to 8 bytes of b as a little-endian word (zero-padded).
func load8(b []byte) uint64 {
	if len(b) >= 8 {
		return binary.LittleEndian.Uint64(b)
	}
	var w uint64
	for i := len(b) - 1; i >= 0; i-- {
		w = w<<8 | uint64(b[i])
	}
	return w
}

// match returns the code of the longest symbol the table finds at the
// start of b (b not empty) and its length; code -1 means no symbol covers
// b[0] (it is escaped).
func (t *fsstTable) match(b []byte) (int, int) {
	if len(b) >= 3 {
		w := load8(b)
		if sl := &t.long[fsstHash(w)]; sl.code >= 0 && int(sl.n) <= len(b) && w&symMask(sl.n) == sl.val {
			return int(sl.code), int(sl.n)
		}
	}
	if len(b) >= 2 {
		if c := t.two[uint16(b[0])|uint16(b[1])<<8]; c >= 0 {
			return int(c), 2
		}
	}
	return int(t.one[b[0]]), 1
}

// appendCompressed appends the FSST codes of v to dst.
func (t *fsstTable) appendCompressed(dst, v []byte) []byte {
	for p := 0; p < len(v); {
		code, n := t.match(v[p:])
		if code < 0 {
			dst = append(dst, fsstEscape, v[p])
			p++
			continue
		}
		dst = append(dst, byte(code))
		p += n
	}
	return dst
}

// serialize lays the table out as Lance stores it: a header word (magic,
// the decoder switch at bit 24, the symbol count), the symbols, their
// lengths, zero-padded to fsstTableBytes.
func (t *fsstTable) serialize() []byte {
	out := make([]byte, fsstTableBytes)
	binary.LittleEndian.PutUint64(out, fsstMagic<<32|1<<24|uint64(len(t.syms)))
	pos := 8
	for _, s := range t.syms {
		binary.LittleEndian.PutUint64(out[pos:], s.val&symMask(s.n))
		pos += 8
	}
	for _, s := range t.syms {
		out[pos] = s.n
		pos++
	}
	return out
}

// fsstCand is a candidate symbol and the bytes it would cover.
type fsstCand struct {
	sym  fsstSym
	gain int
}

// trainFSST learns a symbol table from sample.
func trainFSST(sample [][]byte) *fsstTable {
	t := new(fsstTable)
	t.reset()
	// Ids: a symbol's code (< 256), or 256+b for an escaped byte b.
	var count1 [512]int
	count2 := make(map[uint32]int)
	symOf := func(id int) fsstSym {
		if id < 256 {
			return t.syms[id]
		}
		return fsstSym{val: uint64(id - 256), n: 1}
	}
	for round := 0; round < fsstRounds; round++ {
		clear(count1[:])
		clear(count2)
		for _, v := range sample {
			prev := -1
			for p := 0; p < len(v); {
				code, n := t.match(v[p:])
				id := code
				if code < 0 {
					id = 256 + int(v[p])
				}
				count1[id]++
				if prev >= 0 {
					count2[uint32(prev)<<9|uint32(id)]++
				}
				prev = id
				p += n
			}
		}
		gains := make(map[fsstSym]int)
		for id, c := range count1 {
			if c > 0 {
				s := symOf(id)
				g := c * int(s.n)
				if s.n == 1 {
					// As FSST does: favour single bytes, which
					// otherwise cost two as escapes.
					g *= 8
				}
				gains[s] += g
			}
		}
		for k, c := range count2 {
			a, b := symOf(int(k>>9)), symOf(int(k&511))
			n := min(8, a.n+b.n)
			s := fsstSym{val: (a.val | b.val<<(8*uint(a.n))) & symMask(n), n: n}
			gains[s] += c * int(n)
		}
		cands := make([]fsstCand, 0, len(gains))
		for s, g := range gains {
			cands = append(cands, fsstCand{s, g})
		}
		sort.Slice(cands, func(i, j int) bool {
			a, b := cands[i], cands[j]
			if a.gain != b.gain {
				return a.gain > b.gain
			}
			if a.sym.n != b.sym.n {
				return a.sym.n > b.sym.n
			}
			return a.sym.val < b.sym.val
		})
		t.reset()
		for _, c := range cands {
			if len(t.syms) == fsstMaxSymbols {
				break
			}
			t.add(c.sym)
		}
	}
	return t
}

// fsstSample picks about fsstSampleSize bytes of values spread over the
// page (whole values, evenly spaced).
func fsstSample(l *leaf, total int) [][]byte {
	step := max(1, total/fsstSampleSize)
	var out [][]byte
	size := 0
	for s := 0; s < l.slots && size < 2*fsstSampleSize; s += step {
		if !l.visible(s) {
			continue
		}
		v := valueBytes(l, s)
		out = append(out, v)
		size += len(v)
	}
	return out
}

// fsstLeaf returns the string leaf l with its values FSST-compressed, or
// nil when l is not a plain string leaf of a 2.2 page of at least
// fsstMinPageBytes, or compression would not save a tenth of its bytes.
func fsstLeaf(l *leaf, f fileLayout) *leaf {
	if !f.largeChunk || l.kind != kindVariable || l.dict != nil || l.vals.DataType().ID() != arrow.STRING {
		return nil
	}
	total, maxLen := 0, 0
	for s := 0; s < l.slots; s++ {
		n := variableLen(l, s)
		total += n
		maxLen = max(maxLen, n)
	}
	if total < fsstMinPageBytes || maxLen < fsstMinMaxLen || total > math.MaxInt32 {
		return nil
	}
	t := trainFSST(fsstSample(l, total))
	offs := make([]int32, l.slots+1)
	data := make([]byte, 0, total/2)
	for s := 0; s < l.slots; s++ {
		if l.visible(s) {
			data = t.appendCompressed(data, valueBytes(l, s))
			if len(data)+fsstTableBytes >= total-total/10 || len(data) > math.MaxInt32 {
				return nil
			}
		}
		offs[s+1] = int32(len(data))
	}
	ob := make([]byte, 4*len(offs))
	for i, o := range offs {
		binary.LittleEndian.PutUint32(ob[4*i:], uint32(o))
	}
	d := array.NewData(arrow.BinaryTypes.Binary, l.slots, []*memory.Buffer{nil, memory.NewBufferBytes(ob), memory.NewBufferBytes(data)}, nil, 0, 0)
	c := *l
	c.vals = array.NewBinaryData(d)
	d.Release()
	c.idx = nil
	c.fsstTable = t.serialize()
	return &c
}
