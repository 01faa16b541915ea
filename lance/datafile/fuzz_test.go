package datafile

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// seedFiles are small LanceDB-written data files committed as fuzz seeds.
func seedFiles(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob("testdata/*.lance")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no seed files: %v", err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = b
	}
	return out
}

// fuzzLimits keeps fuzzed pages small so the fuzzer looks for crashes, not
// for ways to allocate gigabytes legitimately.
var fuzzLimits = limits{maxItems: 1 << 16, maxBytes: 1 << 22}

// readAll decodes every top-level field of a file, returning the first error.
func readAll(r *Reader, maxRows uint64) error {
	for _, f := range r.Schema().Flatten() {
		if f.ParentID >= 0 {
			continue
		}
		dt, err := f.ArrowType()
		if err != nil {
			return err
		}
		n := min(r.NumRows(), maxRows)
		a, err := r.ReadField(context.Background(), f.ID, dt, 0, n, memory.DefaultAllocator)
		if err != nil {
			return err
		}
		for i := 0; i < a.Len(); i++ {
			if _, err := AppendJSON(nil, a, i); err != nil {
				a.Release()
				return err
			}
		}
		a.Release()
		if n > 0 {
			a, err = r.ReadFieldRows(context.Background(), f.ID, dt, []uint64{0, n - 1}, memory.DefaultAllocator)
			if err != nil {
				return err
			}
			a.Release()
		}
	}
	return nil
}

// TestSeedFiles checks that every committed seed decodes without error.
func TestSeedFiles(t *testing.T) {
	for p, b := range seedFiles(t) {
		r, err := Open(bytes.NewReader(b), int64(len(b)), p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if err := readAll(r, r.NumRows()); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
}

// FuzzFile: any bytes either decode or give an error; never a panic.
func FuzzFile(f *testing.F) {
	for _, b := range seedFiles(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := openLimited(bytes.NewReader(b), int64(len(b)), "fuzz", fuzzLimits)
		if err != nil {
			return
		}
		if r.NumRows() > 1<<16 {
			return
		}
		_ = readAll(r, 1<<12)
	})
}

// packBufs frames page buffers for FuzzPage: u32 length then bytes each.
func packBufs(bufs [][]byte) []byte {
	var out []byte
	for _, b := range bufs {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
	}
	return out
}

func unpackBufs(b []byte) [][]byte {
	var out [][]byte
	for len(b) >= 4 && len(out) < 8 {
		n := binary.LittleEndian.Uint32(b)
		b = b[4:]
		if uint64(n) > uint64(len(b)) {
			n = uint32(len(b))
		}
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

// FuzzPage fuzzes one 2.1+ page: its layout protobuf and its buffers.
func FuzzPage(f *testing.F) {
	for p, b := range seedFiles(f) {
		r, err := Open(bytes.NewReader(b), int64(len(b)), p)
		if err != nil {
			f.Fatal(err)
		}
		if r.legacy != nil || r.minor == 0 {
			continue
		}
		for _, c := range r.cols {
			for _, pg := range c.Pages {
				var a anypb.Any
				if err := proto.Unmarshal(pg.GetEncoding().GetDirect().GetEncoding(), &a); err != nil {
					f.Fatal(err)
				}
				var bufs [][]byte
				for i := range pg.BufferOffsets {
					bufs = append(bufs, b[pg.BufferOffsets[i]:pg.BufferOffsets[i]+pg.BufferSizes[i]])
				}
				f.Add(a.Value, packBufs(bufs), uint16(pg.Length))
			}
		}
	}
	f.Fuzz(func(t *testing.T, layout, blob []byte, rows uint16) {
		var l enc21pb.PageLayout
		if proto.Unmarshal(layout, &l) != nil {
			return
		}
		bufs := unpackBufs(blob)
		// A take of a few rows, with a repeat and a gap.
		var take []uint64
		if n := uint64(rows); n > 0 {
			take = []uint64{0, n / 3, n / 3, n/3 + 1, n - 1}
		}
		switch x := l.Layout.(type) {
		case *enc21pb.PageLayout_MiniBlockLayout:
			if pd, err := decodeMiniBlock(x.MiniBlockLayout, memBufs(bufs), uint64(rows), rowRange{uint64(rows) / 3, uint64(rows)}, fuzzLimits); err == nil {
				_, _ = pd.slice(0, pd.numRows/2)
			}
			if x.MiniBlockLayout.RepCompression == nil {
				_, _ = takeMiniBlock(x.MiniBlockLayout, memBufs(bufs), uint64(rows), take, fuzzLimits)
			} else if pd, err := decodeMiniBlock(x.MiniBlockLayout, memBufs(bufs), uint64(rows), rowRange{0, uint64(rows)}, fuzzLimits); err == nil {
				_ = appendRows(&pageData{}, pd, take)
			}
		case *enc21pb.PageLayout_FullZipLayout:
			if pd, err := decodeFullZip(x.FullZipLayout, memBufs(bufs), uint64(rows), rowRange{uint64(rows) / 2, uint64(rows)}, fuzzLimits); err == nil {
				_, _ = pd.slice(0, pd.numRows)
			}
			_, _ = decodeFullZip(x.FullZipLayout, memBufs(bufs), uint64(rows), rowRange{0, uint64(rows)}, fuzzLimits)
			_, _ = takeFullZip(x.FullZipLayout, memBufs(bufs), uint64(rows), take, fuzzLimits)
		case *enc21pb.PageLayout_ConstantLayout:
			if pd, err := decodeConstant(x.ConstantLayout, bufs, uint64(rows), fuzzLimits); err == nil {
				_ = appendRows(&pageData{}, pd, take)
			}
		}
	})
}
