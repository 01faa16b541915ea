package datawriter

import (
	"encoding/binary"
	"math"
	"slices"

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
// Leis, VLDB 2020): three rounds (five gave no fewer bytes on the bench
// tables and cost more per page), each compressing the sample with the
// current table, counting how often each symbol and each pair of
// consecutive symbols occurs, and keeping the 255 candidates (symbols and
// concatenations of two) that cover the most bytes.

const (
	fsstTableBytes = 8 + 256*8 + 256 // the serialized table, always this size
	fsstMagic      = 0x46535354      // "FSST", the header's top 32 bits
	fsstEscape     = 255
	fsstMaxSymbols = 255
	fsstRounds     = 3
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

// fsstSlot is a hash slot for a symbol of 3+ bytes; code is the symbol's
// code + 1 (0: empty).
type fsstSlot struct {
	val  uint64
	n    uint8
	code int16
}

// fsstTable is a symbol table with the lookups its compressor needs. The
// lookups hold code + 1, so that 0 (the zero table) means no symbol and a
// reset clears only the entries its symbols took.
type fsstTable struct {
	syms []fsstSym
	one  [256]int16     // 1-byte symbol b
	two  [1 << 16]int16 // 2-byte symbol b0|b1<<8
	long [fsstHashSlots]fsstSlot
}

func (t *fsstTable) reset() {
	for _, s := range t.syms {
		switch {
		case s.n == 1:
			t.one[s.val&0xFF] = 0
		case s.n == 2:
			t.two[s.val&0xFFFF] = 0
		default:
			t.long[fsstHash(s.val)] = fsstSlot{}
		}
	}
	t.syms = t.syms[:0]
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
	code := int16(len(t.syms)) + 1
	switch {
	case s.n == 1:
		if t.one[s.val&0xFF] != 0 {
			return false
		}
		t.one[s.val&0xFF] = code
	case s.n == 2:
		if t.two[s.val&0xFFFF] != 0 {
			return false
		}
		t.two[s.val&0xFFFF] = code
	default:
		h := fsstHash(s.val)
		if t.long[h].code != 0 {
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
		if sl := &t.long[fsstHash(w)]; sl.code != 0 && int(sl.n) <= len(b) && w&symMask(sl.n) == sl.val {
			return int(sl.code) - 1, int(sl.n)
		}
	}
	if len(b) >= 2 {
		if c := t.two[uint16(b[0])|uint16(b[1])<<8]; c != 0 {
			return int(c) - 1, 2
		}
	}
	return int(t.one[b[0]]) - 1, 1
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
	// Ids: a symbol's code (< 256), or 256+b for an escaped byte b. Pair
	// counts live in one flat array; touched lists the pairs seen, so a
	// round reads and clears only those.
	var count1 [512]int
	count2 := make([]uint16, 512*512)
	var touched []uint32
	symOf := func(id int) fsstSym {
		if id < 256 {
			return t.syms[id]
		}
		return fsstSym{val: uint64(id - 256), n: 1}
	}
	var top fsstTop
	for round := 0; round < fsstRounds; round++ {
		clear(count1[:])
		for _, k := range touched {
			count2[k] = 0
		}
		touched = touched[:0]
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
					k := uint32(prev)<<9 | uint32(id)
					if count2[k] == 0 {
						touched = append(touched, k)
					}
					if count2[k] < 0xFFFF {
						count2[k]++
					}
				}
				prev = id
				p += n
			}
		}
		// A candidate's gain is the bytes it covers; a concatenation may
		// equal a symbol or another concatenation, whose gains add up.
		gains := make(map[fsstSym]int, 512+len(touched)/4)
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
		for _, k := range touched {
			c := int(count2[k])
			if c < 2 {
				continue // a pair seen once covers no more than it costs
			}
			a, b := symOf(int(k>>9)), symOf(int(k&511))
			n := min(8, a.n+b.n)
			s := fsstSym{val: (a.val | b.val<<(8*uint(a.n))) & symMask(n), n: n}
			gains[s] += c * int(n)
		}
		top.reset()
		for s, g := range gains {
			top.offer(fsstCand{s, g})
		}
		cands := top.sorted()
		t.reset()
		for _, c := range cands {
			t.add(c.sym)
		}
	}
	return t
}

// fsstTop keeps the fsstMaxSymbols best candidates offered (a min-heap on
// gain, ties broken towards longer, then smaller symbols, so the choice
// does not depend on the order candidates come in).
type fsstTop struct{ h []fsstCand }

func (t *fsstTop) reset() { t.h = t.h[:0] }

// less orders candidates worst first.
func candLess(a, b fsstCand) bool {
	if a.gain != b.gain {
		return a.gain < b.gain
	}
	if a.sym.n != b.sym.n {
		return a.sym.n < b.sym.n
	}
	return a.sym.val > b.sym.val
}

func (t *fsstTop) offer(c fsstCand) {
	if len(t.h) < fsstMaxSymbols {
		t.h = append(t.h, c)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !candLess(t.h[i], t.h[p]) {
				break
			}
			t.h[i], t.h[p] = t.h[p], t.h[i]
			i = p
		}
		return
	}
	if !candLess(t.h[0], c) {
		return
	}
	t.h[0] = c
	for i := 0; ; {
		m, l, r := i, 2*i+1, 2*i+2
		if l < len(t.h) && candLess(t.h[l], t.h[m]) {
			m = l
		}
		if r < len(t.h) && candLess(t.h[r], t.h[m]) {
			m = r
		}
		if m == i {
			break
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}

// sorted returns the kept candidates best first.
func (t *fsstTop) sorted() []fsstCand {
	out := slices.Clone(t.h)
	slices.SortFunc(out, func(a, b fsstCand) int {
		switch {
		case candLess(b, a):
			return -1
		case candLess(a, b):
			return 1
		}
		return 0
	})
	return out
}

// fsstSample picks about fsstSampleSize bytes of values spread over the
// page (whole values, evenly spaced).
func fsstSample(l *leaf, total int) [][]byte {
	step := max(1, total/fsstSampleSize)
	var out [][]byte
	size := 0
	for s := 0; s < l.slots && size < fsstSampleSize; s += step {
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
