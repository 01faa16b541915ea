package datawriter

import (
	"encoding/binary"
	"io"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/mvd-project/mvd/lance/internal/pb/enc20pb"
	"github.com/mvd-project/mvd/lance/internal/pb/filepb"
	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// Readers of 2.1+ files assert that page buffers start on 64-byte
// boundaries.
const bufferAlign = 64

// container streams one data file to w: page buffers as they are encoded,
// then the metadata at the end, so only one page is in memory at a time.
type container struct {
	w       io.Writer
	pos     uint64
	columns [][]byte // serialized ColumnMetadata, one per column
	major   uint16
	minor   uint16
}

func (c *container) write(b []byte) error {
	n, err := c.w.Write(b)
	c.pos += uint64(n)
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	return err
}

// addBuffer writes an aligned buffer and returns its position and size.
func (c *container) addBuffer(b []byte) (uint64, uint64, error) {
	if err := c.pad(); err != nil {
		return 0, 0, err
	}
	pos := c.pos
	return pos, uint64(len(b)), c.write(b)
}

func (c *container) pad() error {
	if r := c.pos % bufferAlign; r != 0 {
		var zeros [bufferAlign]byte
		return c.write(zeros[:bufferAlign-r])
	}
	return nil
}

// page is one encoded page: its buffers and its layout.
type page struct {
	buffers [][]byte
	// layout is a *enc21pb.PageLayout (2.1+) or *enc20pb.ArrayEncoding (2.0).
	layout proto.Message
	rows   uint64
	first  uint64 // first row of the page (the page's priority)
	// scratch is a buffer of the page that may be reused for another page
	// once this one is written (nil: none).
	scratch []byte
}

// addPage writes a page's buffers and returns its metadata.
func (c *container) addPage(p page) (*filepb.ColumnMetadata_Page, error) {
	name := "lance.encodings21.PageLayout"
	if _, v20 := p.layout.(*enc20pb.ArrayEncoding); v20 {
		name = "lance.encodings.ArrayEncoding"
	}
	enc, err := anyEncoding(name, p.layout)
	if err != nil {
		return nil, err
	}
	mp := &filepb.ColumnMetadata_Page{Length: p.rows, Encoding: enc, Priority: p.first}
	for _, b := range p.buffers {
		pos, size, err := c.addBuffer(b)
		if err != nil {
			return nil, err
		}
		mp.BufferOffsets = append(mp.BufferOffsets, pos)
		mp.BufferSizes = append(mp.BufferSizes, size)
	}
	return mp, nil
}

// addColumn records a column's metadata; its pages are already written.
func (c *container) addColumn(pages []*filepb.ColumnMetadata_Page) error {
	colEnc, err := anyEncoding("lance.encodings.ColumnEncoding", &enc20pb.ColumnEncoding{
		ColumnEncoding: &enc20pb.ColumnEncoding_Values{Values: &emptypb.Empty{}},
	})
	if err != nil {
		return err
	}
	raw, err := proto.Marshal(&filepb.ColumnMetadata{Encoding: colEnc, Pages: pages})
	if err != nil {
		return err
	}
	c.columns = append(c.columns, raw)
	return nil
}

// anyEncoding wraps a message in Encoding{direct{Any}} with Lance's
// type-URL convention (a bare "/" prefix).
func anyEncoding(name string, m proto.Message) (*filepb.Encoding, error) {
	v, err := proto.Marshal(m)
	if err != nil {
		return nil, err
	}
	a, err := proto.Marshal(&anypb.Any{TypeUrl: "/" + name, Value: v})
	if err != nil {
		return nil, err
	}
	return &filepb.Encoding{Location: &filepb.Encoding_Direct{Direct: &filepb.DirectEncoding{Encoding: a}}}, nil
}

// finish writes global buffer 0 (the FileDescriptor), the column
// metadata, the offset tables and the footer.
func (c *container) finish(fields []*tablepb.Field, metadata map[string][]byte, rows uint64) error {
	fd, err := proto.Marshal(&tablepb.FileDescriptor{Schema: &tablepb.Schema{Fields: fields, Metadata: metadata}, Length: rows})
	if err != nil {
		return err
	}
	gbPos, gbSize, err := c.addBuffer(fd)
	if err != nil {
		return err
	}
	colStart := c.pos
	var tail []byte
	var cmo []byte
	for _, cm := range c.columns {
		cmo = binary.LittleEndian.AppendUint64(cmo, colStart+uint64(len(tail)))
		cmo = binary.LittleEndian.AppendUint64(cmo, uint64(len(cm)))
		tail = append(tail, cm...)
	}
	cmoStart := colStart + uint64(len(tail))
	tail = append(tail, cmo...)
	gboStart := colStart + uint64(len(tail))
	tail = binary.LittleEndian.AppendUint64(tail, gbPos)
	tail = binary.LittleEndian.AppendUint64(tail, gbSize)
	tail = binary.LittleEndian.AppendUint64(tail, colStart)
	tail = binary.LittleEndian.AppendUint64(tail, cmoStart)
	tail = binary.LittleEndian.AppendUint64(tail, gboStart)
	tail = binary.LittleEndian.AppendUint32(tail, 1)
	tail = binary.LittleEndian.AppendUint32(tail, uint32(len(c.columns)))
	tail = binary.LittleEndian.AppendUint16(tail, c.major)
	tail = binary.LittleEndian.AppendUint16(tail, c.minor)
	tail = append(tail, "LANC"...)
	return c.write(tail)
}
