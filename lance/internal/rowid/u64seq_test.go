package rowid

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"google.golang.org/protobuf/proto"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// Segment builders for tests: each returns the protobuf and the values it
// must expand to.

func pbRange(start, end uint64) *tablepb.U64Segment {
	return &tablepb.U64Segment{Segment: &tablepb.U64Segment_Range_{Range: &tablepb.U64Segment_Range{Start: start, End: end}}}
}

func pbHoles(start, end uint64, holes *tablepb.EncodedU64Array) *tablepb.U64Segment {
	return &tablepb.U64Segment{Segment: &tablepb.U64Segment_RangeWithHoles_{RangeWithHoles: &tablepb.U64Segment_RangeWithHoles{Start: start, End: end, Holes: holes}}}
}

func pbBitmap(start, end uint64, bits []byte) *tablepb.U64Segment {
	return &tablepb.U64Segment{Segment: &tablepb.U64Segment_RangeWithBitmap_{RangeWithBitmap: &tablepb.U64Segment_RangeWithBitmap{Start: start, End: end, Bitmap: bits}}}
}

func pbSorted(a *tablepb.EncodedU64Array) *tablepb.U64Segment {
	return &tablepb.U64Segment{Segment: &tablepb.U64Segment_SortedArray{SortedArray: a}}
}

func pbArray(a *tablepb.EncodedU64Array) *tablepb.U64Segment {
	return &tablepb.U64Segment{Segment: &tablepb.U64Segment_Array{Array: a}}
}

func u16Array(base uint64, vals []uint64) *tablepb.EncodedU64Array {
	b := make([]byte, 2*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(v-base))
	}
	return &tablepb.EncodedU64Array{Array: &tablepb.EncodedU64Array_U16Array_{U16Array: &tablepb.EncodedU64Array_U16Array{Base: base, Offsets: b}}}
}

func u32Array(base uint64, vals []uint64) *tablepb.EncodedU64Array {
	b := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v-base))
	}
	return &tablepb.EncodedU64Array{Array: &tablepb.EncodedU64Array_U32Array_{U32Array: &tablepb.EncodedU64Array_U32Array{Base: base, Offsets: b}}}
}

func u64Array(vals []uint64) *tablepb.EncodedU64Array {
	b := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	return &tablepb.EncodedU64Array{Array: &tablepb.EncodedU64Array_U64Array_{U64Array: &tablepb.EncodedU64Array_U64Array{Values: b}}}
}

// lsbBitmap sets bit v-start (LSB first) for each v.
func lsbBitmap(start, end uint64, vals []uint64) []byte {
	b := make([]byte, (end-start+7)/8)
	for _, v := range vals {
		o := v - start
		b[o/8] |= 1 << (o % 8)
	}
	return b
}

func encodeSeq(t *testing.T, segs ...*tablepb.U64Segment) []byte {
	t.Helper()
	b, err := proto.Marshal(&tablepb.RowIdSequence{Segments: segs})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestU64SequenceKinds checks every segment kind and array width against a
// plain expansion: Len, At at every position, Each and AddRange over many
// sub-ranges.
func TestU64SequenceKinds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	present := func(start, end uint64, keep float64) (vals, holes []uint64) {
		for v := start; v < end; v++ {
			if rng.Float64() < keep {
				vals = append(vals, v)
			} else {
				holes = append(holes, v)
			}
		}
		return vals, holes
	}
	type tc struct {
		name string
		segs []*tablepb.U64Segment
		want []uint64
	}
	var cases []tc
	cases = append(cases, tc{"empty", nil, nil})
	cases = append(cases, tc{"range", []*tablepb.U64Segment{pbRange(100, 1100)}, seqRange(100, 1100)})
	cases = append(cases, tc{"empty range", []*tablepb.U64Segment{pbRange(7, 7)}, nil})
	for _, keep := range []float64{0.05, 0.5, 0.97} {
		vals, holes := present(5000, 7000, keep)
		cases = append(cases,
			tc{"holes u16", []*tablepb.U64Segment{pbHoles(5000, 7000, u16Array(5000, holes))}, vals},
			tc{"holes u32", []*tablepb.U64Segment{pbHoles(5000, 7000, u32Array(4000, holes))}, vals},
			tc{"holes u64", []*tablepb.U64Segment{pbHoles(5000, 7000, u64Array(holes))}, vals},
			tc{"bitmap", []*tablepb.U64Segment{pbBitmap(5000, 7000, lsbBitmap(5000, 7000, vals))}, vals},
			tc{"bitmap odd span", []*tablepb.U64Segment{pbBitmap(5000, 6995, lsbBitmap(5000, 6995, trimTo(vals, 6995)))}, trimTo(vals, 6995)},
			tc{"sorted u16", []*tablepb.U64Segment{pbSorted(u16Array(5000, vals))}, vals},
			tc{"sorted u32", []*tablepb.U64Segment{pbSorted(u32Array(0, vals))}, vals},
			tc{"sorted u64", []*tablepb.U64Segment{pbSorted(u64Array(vals))}, vals},
		)
	}
	shuffled := seqRange(1<<40, 1<<40+500)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	cases = append(cases, tc{"array u64", []*tablepb.U64Segment{pbArray(u64Array(shuffled))}, shuffled})
	// A mixed sequence as compaction writes it: segments of several kinds.
	mixVals, mixHoles := present(20000, 21000, 0.7)
	cases = append(cases, tc{"mixed", []*tablepb.U64Segment{
		pbRange(0, 300),
		pbBitmap(300, 900, lsbBitmap(300, 900, every3(seqRange(300, 900)))),
		pbHoles(20000, 21000, u16Array(20000, mixHoles)),
		pbSorted(u32Array(30000, []uint64{30001, 30005, 30010})),
		pbArray(u16Array(40000, []uint64{40009, 40001, 40005})),
	}, slices.Concat(seqRange(0, 300), every3(seqRange(300, 900)), mixVals, []uint64{30001, 30005, 30010}, []uint64{40009, 40001, 40005})})

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			seq, err := DecodeRowIDSequence(encodeSeq(t, c.segs...))
			if err != nil {
				t.Fatal(err)
			}
			checkSeq(t, seq, c.want)
		})
	}
}

func checkSeq(t *testing.T, seq *U64Sequence, want []uint64) {
	t.Helper()
	n := uint64(len(want))
	if seq.Len() != n {
		t.Fatalf("Len = %d, want %d", seq.Len(), n)
	}
	for i, w := range want {
		if got := seq.At(uint64(i)); got != w {
			t.Fatalf("At(%d) = %d, want %d", i, got, w)
		}
	}
	// Gather of every third position, and of all, across segments.
	for _, step := range []int{3, 1} {
		var at, exp []uint64
		for i := 0; i < len(want); i += step {
			at, exp = append(at, uint64(i)), append(exp, want[i])
		}
		got := make([]uint64, len(at))
		seq.Gather(at, got)
		if !slices.Equal(got, exp) {
			t.Fatalf("Gather of every %d-th position differs", step)
		}
	}
	pos := map[uint64]uint64{}
	for i, w := range want {
		pos[w] = uint64(i)
		if p, ok := seq.Find(w); !ok || p != uint64(i) {
			t.Fatalf("Find(%d) = %d, %v; want %d", w, p, ok, i)
		}
	}
	for _, probe := range []uint64{0, 1, 99, 5001, 6999, 7000, 1 << 40, 1<<40 + 500, ^uint64(0)} {
		p, ok := seq.Find(probe)
		wp, wok := pos[probe]
		if ok != wok || (ok && p != wp) {
			t.Fatalf("Find(%d) = %d, %v; want %d, %v", probe, p, ok, wp, wok)
		}
	}
	bounds := [][2]uint64{{0, n}, {0, 0}, {n, n}, {0, n / 2}, {n / 3, n}, {n / 4, 3 * n / 4}, {1, 2}, {n, n + 5}}
	for _, bd := range bounds {
		lo, hi := bd[0], bd[1]
		var got []uint64
		seq.Each(lo, hi, func(v uint64) { got = append(got, v) })
		exp := want[min(lo, n):min(hi, n)]
		if !slices.Equal(got, exp) && !(len(got) == 0 && len(exp) == 0) {
			t.Fatalf("Each(%d, %d) = %v, want %v", lo, hi, head(got), head(exp))
		}
		bm := roaring64.New()
		seq.AddRange(bm, lo, hi)
		expBM := roaring64.BitmapOf(exp...)
		if !bm.Equals(expBM) {
			t.Fatalf("AddRange(%d, %d) has %d ids, want %d", lo, hi, bm.GetCardinality(), expBM.GetCardinality())
		}
	}
}

func head(v []uint64) []uint64 { return v[:min(len(v), 10)] }

func seqRange(lo, hi uint64) []uint64 {
	out := make([]uint64, 0, hi-lo)
	for v := lo; v < hi; v++ {
		out = append(out, v)
	}
	return out
}

func trimTo(vals []uint64, end uint64) []uint64 {
	var out []uint64
	for _, v := range vals {
		if v < end {
			out = append(out, v)
		}
	}
	return out
}

// TestU64SequenceRefusesBadInput: malformed sequences give ErrCorrupt or
// ErrUnsupported, never a guess.
func TestU64SequenceRefusesBadInput(t *testing.T) {
	unknownKind := []byte{0x0a, 0x04, 0x32, 0x02, 0x08, 0x01} // segment with field 6
	cases := []struct {
		name string
		raw  []byte
		want error
	}{
		{"reversed range", encodeSeq(t, pbRange(10, 5)), ErrCorrupt},
		{"hole outside range", encodeSeq(t, pbHoles(10, 20, u16Array(0, []uint64{25}))), ErrCorrupt},
		{"holes out of order", encodeSeq(t, pbHoles(10, 20, u16Array(10, []uint64{15, 12}))), ErrCorrupt},
		{"bitmap too short", encodeSeq(t, pbBitmap(0, 20, []byte{1})), ErrCorrupt},
		{"bitmap padding set", encodeSeq(t, pbBitmap(0, 4, []byte{0x10})), ErrCorrupt},
		{"unsorted sorted array", encodeSeq(t, pbSorted(u64Array([]uint64{3, 2}))), ErrCorrupt},
		{"odd u16 array", encodeSeq(t, pbArray(&tablepb.EncodedU64Array{Array: &tablepb.EncodedU64Array_U16Array_{U16Array: &tablepb.EncodedU64Array_U16Array{Offsets: []byte{1}}}})), ErrCorrupt},
		{"empty segment", encodeSeq(t, &tablepb.U64Segment{}), ErrCorrupt},
		{"unknown segment kind", unknownKind, ErrUnsupported},
		{"not protobuf", []byte{0xff, 0xff, 0xff}, ErrCorrupt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeRowIDSequence(c.raw)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
}

func TestVersionSequence(t *testing.T) {
	run := func(seg *tablepb.U64Segment, v uint64) *tablepb.RowDatasetVersionRun {
		return &tablepb.RowDatasetVersionRun{Span: seg, Version: v}
	}
	// Spans as 0.39 writes them after compaction: only their lengths count.
	raw, err := proto.Marshal(&tablepb.RowDatasetVersionSequence{Runs: []*tablepb.RowDatasetVersionRun{
		run(pbBitmap(0, 10, lsbBitmap(0, 10, []uint64{0, 2, 3, 9})), 1),
		run(pbRange(0, 2), 1),
		run(pbRange(2, 3), 2),
		run(pbRange(7, 7), 9), // empty: covers no row
		run(pbSorted(u16Array(0, []uint64{4, 8, 9})), 6),
	}})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := DecodeVersionSequence(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []uint64{1, 1, 1, 1, 1, 1, 2, 6, 6, 6}
	if vs.Len() != uint64(len(want)) {
		t.Fatalf("Len = %d, want %d", vs.Len(), len(want))
	}
	for i, w := range want {
		if got := vs.At(uint64(i)); got != w {
			t.Errorf("At(%d) = %d, want %d", i, got, w)
		}
	}
	var runs [][3]uint64
	vs.Runs(func(lo, hi, v uint64) { runs = append(runs, [3]uint64{lo, hi, v}) })
	if !slices.Equal(runs, [][3]uint64{{0, 4, 1}, {4, 6, 1}, {6, 7, 2}, {7, 10, 6}}) {
		t.Errorf("Runs = %v", runs)
	}
	if _, err := DecodeVersionSequence([]byte{0x0a, 0x02, 0x10, 0x01}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("run without span: err = %v, want ErrCorrupt", err)
	}
}

func every3(v []uint64) []uint64 {
	var out []uint64
	for i := 0; i < len(v); i += 3 {
		out = append(out, v[i])
	}
	return out
}
