package bench

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// arrowBytes returns the bytes of Arrow data a batch holds, counted the way
// bench_scan.mjs counts LanceDB's (the length of every buffer, offsets
// included), but only over the rows the batch covers: scan batches are
// often zero-copy slices of a larger decoded page, which must not be
// counted twice.
func arrowBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += dataBytes(c.Data())
	}
	return n
}

func dataBytes(d arrow.ArrayData) int64 {
	n, off := int64(d.Len()), int64(d.Offset())
	var total int64
	if bufs := d.Buffers(); len(bufs) > 0 && bufs[0] != nil && d.NullN() > 0 {
		total += (n + 7) / 8
	}
	switch t := d.DataType().(type) {
	case *arrow.BooleanType:
		total += (n + 7) / 8
	case arrow.FixedWidthDataType:
		total += n * int64(t.BitWidth()) / 8
	case *arrow.StringType, *arrow.BinaryType:
		lo, hi := offsets32(d, off, n)
		total += 4*(n+1) + hi - lo
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		lo, hi := offsets64(d, off, n)
		total += 8*(n+1) + hi - lo
	case *arrow.ListType:
		lo, hi := offsets32(d, off, n)
		total += 4*(n+1) + childBytes(d.Children()[0], lo, hi)
	case *arrow.FixedSizeListType:
		size := int64(t.Len())
		total += childBytes(d.Children()[0], off*size, (off+n)*size)
	case *arrow.StructType:
		for _, c := range d.Children() {
			total += childBytes(c, off, off+n)
		}
	default:
		// A type the benchmark table does not have: count its buffers whole.
		for _, b := range d.Buffers() {
			if b != nil {
				total += int64(b.Len())
			}
		}
	}
	return total
}

func childBytes(c arrow.ArrayData, lo, hi int64) int64 {
	s := array.NewSliceData(c, lo, hi)
	defer s.Release()
	return dataBytes(s)
}

func offsets32(d arrow.ArrayData, off, n int64) (lo, hi int64) {
	b := d.Buffers()[1].Bytes()
	return int64(int32(binary.LittleEndian.Uint32(b[4*off:]))), int64(int32(binary.LittleEndian.Uint32(b[4*(off+n):])))
}

func offsets64(d arrow.ArrayData, off, n int64) (lo, hi int64) {
	b := d.Buffers()[1].Bytes()
	return int64(binary.LittleEndian.Uint64(b[8*off:])), int64(binary.LittleEndian.Uint64(b[8*(off+n):]))
}
