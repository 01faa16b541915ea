package datafile

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/mvd-project/mvd/lance/internal/format"
	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
	"github.com/mvd-project/mvd/lance/internal/pb/filepb"
)

// openSeed opens a committed seed file.
func openSeed(t *testing.T, name string) *Reader {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(bytes.NewReader(b), int64(len(b)), name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// setLayout replaces the encoding of page 0 of column c with raw bytes of a
// PageLayout message.
func setLayout(t *testing.T, r *Reader, c int, layout []byte) {
	t.Helper()
	a := &anypb.Any{TypeUrl: "/" + pageLayoutName, Value: layout}
	ab, err := proto.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	// Copy the column metadata: the Reader's own stays untouched by others.
	cm := proto.Clone(r.cols[c]).(*filepb.ColumnMetadata)
	cm.Pages[0].Encoding = &filepb.Encoding{Location: &filepb.Encoding_Direct{Direct: &filepb.DirectEncoding{Encoding: ab}}}
	r.cols[c] = cm
}

func layoutOf(t *testing.T, r *Reader, c int) *enc21pb.PageLayout {
	t.Helper()
	var a anypb.Any
	if err := proto.Unmarshal(r.cols[c].Pages[0].GetEncoding().GetDirect().GetEncoding(), &a); err != nil {
		t.Fatal(err)
	}
	var l enc21pb.PageLayout
	if err := proto.Unmarshal(a.Value, &l); err != nil {
		t.Fatal(err)
	}
	return &l
}

// TestRefuseUnknown checks that what the decoder does not understand is an
// error naming the file, column and page, never nulls.
func TestRefuseUnknown(t *testing.T) {
	ctx := context.Background()
	mem := memory.DefaultAllocator
	const col = 4 // field 4 "i32", nullable int32 in a mini-block page
	read := func(r *Reader) error {
		dt, err := r.Schema().FieldByID(int32(col)).ArrowType()
		if err != nil {
			t.Fatal(err)
		}
		a, err := r.ReadField(ctx, int32(col), dt, 0, r.NumRows(), mem)
		if err == nil {
			a.Release()
		}
		return err
	}
	cases := map[string]func(r *Reader){
		// A SparseLayout (tag 5, a 2.3 layout) is unknown to this reader.
		"sparse layout": func(r *Reader) {
			setLayout(t, r, col, protowire.AppendBytes(protowire.AppendTag(nil, 5, protowire.BytesType), nil))
		},
		// A Range compression (tag 14, newer than 0.39) for the values.
		"range compression": func(r *Reader) {
			l := layoutOf(t, r, col)
			l.GetMiniBlockLayout().ValueCompression = &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Range{Range: &enc21pb.Range{UncompressedBitsPerValue: 32, Step: 1}}}
			b, _ := proto.Marshal(l)
			setLayout(t, r, col, b)
		},
		// An unknown compression kind (oneof tag 99).
		"unknown compression": func(r *Reader) {
			l := layoutOf(t, r, col)
			l.GetMiniBlockLayout().ValueCompression = nil
			b, _ := proto.Marshal(l)
			inner := protowire.AppendBytes(protowire.AppendTag(nil, 99, protowire.BytesType), nil)
			b = protowire.AppendBytes(protowire.AppendTag(b[:0:0], 1, protowire.BytesType), append(mustSub(t, b), protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), inner)...))
			setLayout(t, r, col, b)
		},
		// A 2.2 page read as if chunk words were u16.
		"no large chunk": func(r *Reader) {
			l := layoutOf(t, r, col)
			l.GetMiniBlockLayout().HasLargeChunk = false
			b, _ := proto.Marshal(l)
			setLayout(t, r, col, b)
		},
		// A field this reader does not know inside a known message.
		"unknown field": func(r *Reader) {
			l := layoutOf(t, r, col)
			b, _ := proto.Marshal(l)
			sub := protowire.AppendVarint(protowire.AppendTag(mustSub(t, b), 42, protowire.VarintType), 1)
			setLayout(t, r, col, protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), sub))
		},
		// Layers that do not match the field's structure.
		"extra layer": func(r *Reader) {
			l := layoutOf(t, r, col)
			mb := l.GetMiniBlockLayout()
			mb.Layers = append(mb.Layers, enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM)
			b, _ := proto.Marshal(l)
			setLayout(t, r, col, b)
		},
		// An all-null page in a non-nullable layer.
		"constant without value": func(r *Reader) {
			l := &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_ConstantLayout{ConstantLayout: &enc21pb.ConstantLayout{Layers: []enc21pb.RepDefLayer{enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM}}}}
			b, _ := proto.Marshal(l)
			setLayout(t, r, col, b)
			r.cols[col].Pages[0].BufferOffsets, r.cols[col].Pages[0].BufferSizes = nil, nil
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			r := openSeed(t, "types_v22_5rows.lance")
			if err := read(r); err != nil {
				t.Fatalf("unmodified file: %v", err)
			}
			mutate(r)
			err := read(r)
			if err == nil {
				t.Fatal("decoded without error")
			}
			t.Log(err)
			if !errors.Is(err, format.ErrUnsupported) && !errors.Is(err, format.ErrCorrupt) {
				t.Errorf("error %q is neither ErrUnsupported nor ErrCorrupt", err)
			}
			for _, want := range []string{"types_v22_5rows.lance", "column 4", "page 0"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
		})
	}
}

// mustSub returns the contents of the first field of a message (the
// mini-block layout inside a PageLayout).
func mustSub(t *testing.T, b []byte) []byte {
	t.Helper()
	_, typ, n := protowire.ConsumeTag(b)
	if typ != protowire.BytesType || n < 0 {
		t.Fatal("not a length-delimited field")
	}
	v, m := protowire.ConsumeBytes(b[n:])
	if m < 0 {
		t.Fatal("bad field")
	}
	return v
}
