package datawriter

import (
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// fullZipFSLPage encodes a fixed-size-list leaf (vectors) as one full-zip
// page: per row an optional control byte holding the def level, then the
// item-validity bitmap (only when some item is null) and the items.
func fullZipFSLPage(l *leaf, n int) (page, error) {
	fsl := l.path[len(l.path)-1].(*array.FixedSizeList)
	items := fsl.ListValues()
	itemBytes := l.bits / 8
	hasValidity := false
	for r := 0; r < n && !hasValidity; r++ {
		if !l.visible(r) {
			continue
		}
		base := (fsl.Data().Offset() + r) * l.dim
		for j := 0; j < l.dim; j++ {
			if items.IsNull(base + j) {
				hasValidity = true
				break
			}
		}
	}
	if hasValidity && l.dim%8 != 0 {
		return page{}, unsupportedf("field %q: null items in vectors of %d items", l.field.Name, l.dim)
	}
	valueBytes := l.dim * itemBytes
	if hasValidity {
		valueBytes += l.dim / 8
	}
	maxDef := uint16(0)
	for _, d := range l.def {
		maxDef = max(maxDef, d)
	}
	bitsDef := bits.Len16(maxDef)
	if bitsDef > 8 {
		return page{}, unsupportedf("field %q: %d definition bits", l.field.Name, bitsDef)
	}
	ctrl := 0
	if bitsDef > 0 {
		ctrl = 1
	}
	raw := items.Data().Buffers()[1].Bytes()
	itemOff := items.Data().Offset()
	out := make([]byte, 0, n*(ctrl+valueBytes))
	for r := 0; r < n; r++ {
		if ctrl == 1 {
			out = append(out, byte(l.def[r]))
		}
		start := len(out)
		out = append(out, make([]byte, valueBytes)...)
		if !l.visible(r) {
			continue // null rows keep zero bytes: the width is fixed
		}
		base := (fsl.Data().Offset() + r) * l.dim
		vals := out[start:]
		if hasValidity {
			for j := 0; j < l.dim; j++ {
				if items.IsValid(base + j) {
					vals[j/8] |= 1 << (j % 8)
				}
			}
			vals = vals[l.dim/8:]
		}
		copy(vals, raw[(itemOff+base)*itemBytes:(itemOff+base+l.dim)*itemBytes])
	}
	layout := &enc21pb.FullZipLayout{
		BitsDef:         uint32(bitsDef),
		Details:         &enc21pb.FullZipLayout_BitsPerValue{BitsPerValue: uint32(valueBytes * 8)},
		NumItems:        uint32(n),
		NumVisibleItems: uint32(n),
		ValueCompression: &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_FixedSizeList{
			FixedSizeList: &enc21pb.FixedSizeList{ItemsPerValue: uint64(l.dim), Values: flat(uint64(l.bits)), HasValidity: hasValidity},
		}},
		Layers: l.layers,
	}
	return page{
		buffers: [][]byte{out},
		layout:  &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_FullZipLayout{FullZipLayout: layout}},
		rows:    uint64(n),
	}, nil
}
