package datafile

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// PageInfo describes one page of one column as the file stores it: which
// encodings wrote it and how many bytes its buffers take. It lets a
// benchmark or a test compare what two writers chose, column by column.
type PageInfo struct {
	// Column is the column's index in the file; Field its field id.
	Column int
	Field  int32
	// Page is the page's index within its column; Rows its row count.
	Page int
	Rows uint64
	// Encoding names the page's layout and the compressions inside it,
	// outermost first, e.g. "mini_block_layout(value_compression(
	// inline_bitpacking) def_compression(flat))".
	Encoding string
	// Bytes is the sum of the page's buffer sizes.
	Bytes uint64
}

// Pages describes every page of every column (2.0, 2.1 and 2.2 files; a
// legacy file has none). A page whose encoding cannot be decoded is an
// error naming it.
func (r *Reader) Pages() ([]PageInfo, error) {
	var out []PageInfo
	fields := make([]int32, len(r.cols))
	if r.tree != nil {
		for id, n := range r.tree.byID {
			if n.column >= 0 && n.column < len(fields) {
				fields[n.column] = id
			}
		}
	}
	for c, cm := range r.cols {
		field := fields[c]
		for p, pg := range cm.Pages {
			var m proto.Message
			var err error
			if r.major == 2 && r.minor == 0 {
				m, _, err = r.encoding20(c, p)
			} else {
				m, _, err = r.pageLayout(c, p)
			}
			if err != nil {
				return nil, fmt.Errorf("%s column %d page %d: %w", r.name, c, p, err)
			}
			var bytes uint64
			for _, s := range pg.BufferSizes {
				bytes += s
			}
			var sb strings.Builder
			describe(&sb, m.ProtoReflect())
			out = append(out, PageInfo{Column: c, Field: field, Page: p, Rows: pg.Length, Encoding: sb.String(), Bytes: bytes})
		}
	}
	return out, nil
}

// describe writes the names of the message fields set in m, nested in
// parentheses; scalars are left out except small integers that say a
// width or a compression scheme, which are written as name=value.
func describe(sb *strings.Builder, m protoreflect.Message) {
	first := true
	// Fields in number order (Range's order is unspecified).
	fds := m.Descriptor().Fields()
	for i := 0; i < fds.Len(); i++ {
		fd := fds.Get(i)
		if !m.Has(fd) {
			continue
		}
		v := m.Get(fd)
		switch {
		case fd.Kind() == protoreflect.MessageKind && !fd.IsList() && !fd.IsMap():
			if !first {
				sb.WriteByte(' ')
			}
			first = false
			sb.WriteString(string(fd.Name()))
			var inner strings.Builder
			describe(&inner, v.Message())
			if inner.Len() > 0 {
				sb.WriteByte('(')
				sb.WriteString(inner.String())
				sb.WriteByte(')')
			}
		case fd.Kind() == protoreflect.EnumKind && !fd.IsList():
			if !first {
				sb.WriteByte(' ')
			}
			first = false
			name := fmt.Sprint(v.Enum())
			if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
				name = string(ev.Name())
			}
			fmt.Fprintf(sb, "%s=%s", fd.Name(), name)
		case strings.HasPrefix(string(fd.Name()), "bits_per") || strings.HasSuffix(string(fd.Name()), "bits_per_value"):
			if !first {
				sb.WriteByte(' ')
			}
			first = false
			fmt.Fprintf(sb, "%s=%v", fd.Name(), v.Interface())
		}
	}
}
