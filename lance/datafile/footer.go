package datafile

import (
	"encoding/binary"
	"fmt"
)

// footerSize is the fixed size of the 2.x file footer.
const footerSize = 40

// footer is the fixed-size tail of a Lance 2.x data file.
type footer struct {
	columnMetaStart uint64
	cmoTableStart   uint64
	gboTableStart   uint64
	numGlobalBufs   uint32
	numColumns      uint32
	major, minor    uint16
}

// parseFooter decodes the 40-byte footer and checks it against the file size.
func parseFooter(b []byte, size int64) (footer, error) {
	if len(b) != footerSize {
		return footer{}, fmt.Errorf("footer is %d bytes, want %d", len(b), footerSize)
	}
	if string(b[36:40]) != "LANC" {
		return footer{}, fmt.Errorf("bad magic %q: not a Lance file", b[36:40])
	}
	f := footer{
		columnMetaStart: binary.LittleEndian.Uint64(b[0:]),
		cmoTableStart:   binary.LittleEndian.Uint64(b[8:]),
		gboTableStart:   binary.LittleEndian.Uint64(b[16:]),
		numGlobalBufs:   binary.LittleEndian.Uint32(b[24:]),
		numColumns:      binary.LittleEndian.Uint32(b[28:]),
		major:           binary.LittleEndian.Uint16(b[32:]),
		minor:           binary.LittleEndian.Uint16(b[34:]),
	}
	end := uint64(size) - footerSize
	if f.columnMetaStart > f.cmoTableStart || f.cmoTableStart > f.gboTableStart || f.gboTableStart > end {
		return footer{}, fmt.Errorf("footer offsets out of order or past the end (%d, %d, %d, file %d bytes)",
			f.columnMetaStart, f.cmoTableStart, f.gboTableStart, size)
	}
	if uint64(f.numColumns)*16 != f.gboTableStart-f.cmoTableStart {
		return footer{}, fmt.Errorf("column offset table holds %d bytes for %d columns", f.gboTableStart-f.cmoTableStart, f.numColumns)
	}
	if uint64(f.numGlobalBufs)*16 != end-f.gboTableStart {
		return footer{}, fmt.Errorf("global buffer table holds %d bytes for %d buffers", end-f.gboTableStart, f.numGlobalBufs)
	}
	return f, nil
}

// version maps the footer's version to the file format version: 2.0 files
// carry the legacy "0.3" in their footer.
func (f footer) version() (int, int, error) {
	switch {
	case f.major == 0 && f.minor == 3:
		return 2, 0, nil
	case f.major == 2 && (f.minor == 0 || f.minor == 1 || f.minor == 2):
		return 2, int(f.minor), nil
	}
	return 0, 0, unsupportedErr("unsupported file version %d.%d", f.major, f.minor)
}

// span is a (position, size) pair from an offset table.
type span struct{ pos, size uint64 }

// parseSpans decodes n (u64 position, u64 size) pairs and checks each
// against limit, the first byte they may not reach.
func parseSpans(b []byte, n int, limit uint64, what string) ([]span, error) {
	if len(b) != n*16 {
		return nil, fmt.Errorf("%s table is %d bytes, want %d", what, len(b), n*16)
	}
	out := make([]span, n)
	for i := range out {
		s := span{binary.LittleEndian.Uint64(b[16*i:]), binary.LittleEndian.Uint64(b[16*i+8:])}
		if s.pos > limit || s.size > limit-s.pos {
			return nil, fmt.Errorf("%s %d at %d+%d is outside the file (%d bytes)", what, i, s.pos, s.size, limit)
		}
		out[i] = s
	}
	return out, nil
}
