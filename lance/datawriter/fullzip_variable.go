package datawriter

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// maxMiniBlockValue21 is the widest string or binary value a 2.1 page
// keeps in mini-blocks: two such values (the smallest chunk but the last)
// with their offsets and levels stay under the 32 KiB chunk limit. A 2.1
// page holding a wider value is written full-zip.
const maxMiniBlockValue21 = 8 * 1024

// needsFullZip reports whether a leaf must go full-zip in this format:
// 2.1 mini-block chunks cannot hold its widest value.
func needsFullZip(l *leaf, f fileLayout) bool {
	if f.largeChunk {
		return false
	}
	if l.kind == kindFixed {
		return l.bits/8 > maxMiniBlockValue21
	}
	if l.kind != kindVariable {
		return false
	}
	for s := 0; s < l.slots; s++ {
		if variableLen(l, s) > maxMiniBlockValue21 {
			return true
		}
	}
	return false
}

// fullZipVariablePage encodes all n rows of a string or binary leaf as one
// full-zip page: a valid visible value is its length and bytes, a null one
// nothing but its control word. Buffer 1 is the repetition index, which
// Lance writes for every variable-width full-zip page.
func fullZipVariablePage(l *leaf, n int) (page, error) {
	offsetBits := 32
	switch l.vals.DataType().ID() {
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		offsetBits = 64 // as in mini-blocks, Lance keeps the Arrow width
	}
	z := newZipper(l, l.numLevels()*5)
	err := z.each(func(s int, valid bool) error {
		if !valid {
			return nil
		}
		v := valueBytes(l, s)
		if offsetBits == 32 {
			if uint64(len(v)) > 0xFFFFFFFF {
				return unsupportedf("field %q: a value of %d bytes", l.field.Name, len(v))
			}
			z.out = binary.LittleEndian.AppendUint32(z.out, uint32(len(v)))
		} else {
			z.out = binary.LittleEndian.AppendUint64(z.out, uint64(len(v)))
		}
		z.out = append(z.out, v...)
		return nil
	})
	if err != nil {
		return page{}, err
	}
	return z.page(n, true, &enc21pb.FullZipLayout{
		Details: &enc21pb.FullZipLayout_BitsPerOffset{BitsPerOffset: uint32(offsetBits)},
		ValueCompression: &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Variable{
			Variable: &enc21pb.Variable{Offsets: flat(uint64(offsetBits))},
		}},
	})
}
