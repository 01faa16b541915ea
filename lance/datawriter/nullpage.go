package datawriter

import (
	"encoding/binary"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// allNullPage encodes n rows of a null-typed leaf as a constant (all-null)
// page, as LanceDB 0.39 writes them. At the top level that is a single
// nullable item layer and no buffers. Below a struct or list the page
// carries the leaf's layers and its rep and def levels as raw u16 buffers
// (an empty buffer when there are none): LanceDB fails on a nested
// all-null page without them.
func allNullPage(l *leaf, n int) page {
	layout := &enc21pb.ConstantLayout{Layers: []enc21pb.RepDefLayer{enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM}}
	p := page{
		layout: &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_ConstantLayout{ConstantLayout: layout}},
		rows:   uint64(n),
	}
	if len(l.path) == 1 {
		return p
	}
	layout.Layers = l.layers
	raw := func(levels []uint16) []byte {
		b := make([]byte, 0, 2*len(levels))
		for _, v := range levels {
			b = binary.LittleEndian.AppendUint16(b, v)
		}
		return b
	}
	p.buffers = [][]byte{raw(l.rep), raw(l.def)}
	return p
}
