package datafile

import (
	"os"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/mvd-project/mvd/lance/internal/pb/enc20pb"
	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// TestDump prints a file's schema and page encodings (debug aid; needs
// MVD_DUMP=<path>).
func TestDump(t *testing.T) {
	p := os.Getenv("MVD_DUMP")
	if p == "" {
		t.Skip("set MVD_DUMP to a .lance file")
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	r, err := Open(f, st.Size(), p)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("version %d.%d rows %d", r.major, r.minor, r.numRows)
	for _, fl := range r.schema.Fields {
		t.Logf("field %d parent %d %q %q nullable=%v md=%v col=%d", fl.Id, fl.ParentId, fl.Name, fl.LogicalType, fl.Nullable, fl.Metadata, r.tree.byID[fl.Id].column)
	}
	for i, c := range r.cols {
		for p, pg := range c.Pages {
			var a anypb.Any
			proto.Unmarshal(pg.GetEncoding().GetDirect().GetEncoding(), &a)
			var m proto.Message
			if r.minor == 0 {
				m = &enc20pb.ArrayEncoding{}
			} else {
				m = &enc21pb.PageLayout{}
			}
			proto.Unmarshal(a.Value, m)
			s := prototext.MarshalOptions{}.Format(m)
			if len(s) > 600 {
				s = s[:600]
			}
			t.Logf("col %d page %d rows %d prio %d sizes %v: %s", i, p, pg.Length, pg.Priority, pg.BufferSizes, s)
		}
	}
}
