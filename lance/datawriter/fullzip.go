package datawriter

import (
	"encoding/binary"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// zipper builds the one data buffer of a full-zip page (lance-format.md
// §3.3): per level a control word (rep in the high bits, def in the low
// bits_def, absent when there are neither), followed by the value of a
// visible item. It notes where each row starts for the repetition index.
type zipper struct {
	l                *leaf
	bitsRep, bitsDef int
	ctrl             int // control word bytes: 0, 1, 2 or 4
	out              []byte
	starts           []uint64
}

func newZipper(l *leaf, sizeHint int) *zipper {
	maxDef := uint16(0)
	for _, d := range l.def {
		maxDef = max(maxDef, d)
	}
	z := &zipper{l: l, bitsDef: bits.Len16(maxDef), bitsRep: bits.Len16(l.maxRep), out: make([]byte, 0, sizeHint)}
	switch tb := z.bitsDef + z.bitsRep; {
	case tb == 0:
	case tb <= 8:
		z.ctrl = 1
	case tb <= 16:
		z.ctrl = 2
	default:
		z.ctrl = 4
	}
	return z
}

// numLevels is the number of items (levels) of the leaf, visible or not.
func (l *leaf) numLevels() int {
	switch {
	case l.rep != nil:
		return len(l.rep)
	case l.def != nil:
		return len(l.def)
	}
	return l.slots
}

// each writes every level's control word and calls value for the visible
// ones (slot s, valid when def is 0), which appends the value's bytes.
func (z *zipper) each(value func(s int, valid bool) error) error {
	l := z.l
	slot := 0
	for k := 0; k < l.numLevels(); k++ {
		var rep, def uint16
		if l.rep != nil {
			rep = l.rep[k]
		}
		if l.def != nil {
			def = l.def[k]
		}
		if l.rep == nil || rep == l.maxRep {
			z.starts = append(z.starts, uint64(len(z.out)))
		}
		cw := uint32(rep)<<z.bitsDef | uint32(def)
		switch z.ctrl {
		case 1:
			z.out = append(z.out, byte(cw))
		case 2:
			z.out = binary.LittleEndian.AppendUint16(z.out, uint16(cw))
		case 4:
			z.out = binary.LittleEndian.AppendUint32(z.out, cw)
		}
		if def > l.maxVisible {
			continue // a null or empty list, or a null above one: no value
		}
		if err := value(slot, def == 0); err != nil {
			return err
		}
		slot++
	}
	if slot != l.slots {
		return mismatchf("field %q: levels describe %d values, the leaf has %d", l.field.Name, slot, l.slots)
	}
	return nil
}

// repIndex returns the repetition index: where each of the n rows starts
// in the data buffer, then its end, in the smallest width that holds the
// end (a reader derives the width from bytes / (rows + 1)).
func (z *zipper) repIndex(n int) ([]byte, error) {
	if len(z.starts) != n {
		return nil, mismatchf("field %q: levels describe %d rows, the page has %d", z.l.field.Name, len(z.starts), n)
	}
	starts := append(z.starts, uint64(len(z.out)))
	width := 8
	switch end := uint64(len(z.out)); {
	case end <= 0xFF:
		width = 1
	case end <= 0xFFFF:
		width = 2
	case end <= 0xFFFFFFFF:
		width = 4
	}
	index := make([]byte, 0, width*len(starts))
	for _, s := range starts {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], s)
		index = append(index, w[:width]...)
	}
	return index, nil
}

// page wraps the zipped buffer (and, with repetition or variable-width
// values, the repetition index) in a full-zip page of n rows.
func (z *zipper) page(n int, withIndex bool, layout *enc21pb.FullZipLayout) (page, error) {
	layout.BitsRep, layout.BitsDef = uint32(z.bitsRep), uint32(z.bitsDef)
	layout.NumItems, layout.NumVisibleItems = uint32(z.l.numLevels()), uint32(z.l.slots)
	layout.Layers = z.l.layers
	buffers := [][]byte{z.out}
	if withIndex {
		idx, err := z.repIndex(n)
		if err != nil {
			return page{}, err
		}
		buffers = append(buffers, idx)
	}
	return page{
		buffers: buffers,
		layout:  &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_FullZipLayout{FullZipLayout: layout}},
		rows:    uint64(n),
	}, nil
}

// fullZipFSLPage encodes a fixed-size-list leaf (vectors) as one full-zip
// page: each visible vector is the item-validity bitmap (only when some
// item is null, padded to whole bytes as Lance's per-value decompressor
// reads it) and the items; a null vector keeps zero bytes, the width being
// fixed. Repeated vectors (lists of vectors) also get a repetition index.
func fullZipFSLPage(l *leaf, n int) (page, error) {
	fsl := l.vals.(*array.FixedSizeList)
	items := fsl.ListValues()
	itemBytes := l.bits / 8
	hasValidity := false
	for s := 0; s < l.slots && !hasValidity; s++ {
		if !l.visible(s) {
			continue
		}
		base := (fsl.Data().Offset() + l.index(s)) * l.dim
		for j := 0; j < l.dim; j++ {
			if items.IsNull(base + j) {
				hasValidity = true
				break
			}
		}
	}
	validityBytes := 0
	if hasValidity {
		validityBytes = (l.dim + 7) / 8
	}
	valueBytes := validityBytes + l.dim*itemBytes
	raw := items.Data().Buffers()[1].Bytes()
	itemOff := items.Data().Offset()
	z := newZipper(l, l.numLevels()+l.slots*valueBytes)
	err := z.each(func(s int, valid bool) error {
		start := len(z.out)
		z.out = append(z.out, make([]byte, valueBytes)...)
		if !valid {
			return nil
		}
		base := (fsl.Data().Offset() + l.index(s)) * l.dim
		vals := z.out[start:]
		if hasValidity {
			for j := 0; j < l.dim; j++ {
				if items.IsValid(base + j) {
					vals[j/8] |= 1 << (j % 8)
				}
			}
			vals = vals[validityBytes:]
		}
		copy(vals, raw[(itemOff+base)*itemBytes:(itemOff+base+l.dim)*itemBytes])
		return nil
	})
	if err != nil {
		return page{}, err
	}
	return z.page(n, l.rep != nil, &enc21pb.FullZipLayout{
		Details: &enc21pb.FullZipLayout_BitsPerValue{BitsPerValue: uint32(valueBytes * 8)},
		ValueCompression: &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_FixedSizeList{
			FixedSizeList: &enc21pb.FixedSizeList{ItemsPerValue: uint64(l.dim), Values: flat(uint64(l.bits)), HasValidity: hasValidity},
		}},
	})
}

// fullZipFixedPage encodes a leaf of wide fixed-width values (in 2.1, too
// wide for mini-block chunks) as one full-zip page: each visible value is
// its bytes, zeros when null.
func fullZipFixedPage(l *leaf, n int) (page, error) {
	width := l.bits / 8
	z := newZipper(l, l.numLevels()+l.slots*width)
	err := z.each(func(s int, valid bool) error {
		if !valid {
			z.out = append(z.out, make([]byte, width)...)
			return nil
		}
		z.out = appendFixed(z.out, l, s, s+1)
		return nil
	})
	if err != nil {
		return page{}, err
	}
	return z.page(n, l.rep != nil, &enc21pb.FullZipLayout{
		Details:          &enc21pb.FullZipLayout_BitsPerValue{BitsPerValue: uint32(l.bits)},
		ValueCompression: flat(uint64(l.bits)),
	})
}
