package lance

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"unsafe"
)

// TestFragmentEncodingsOwned: where a manifest shares most fragments with
// the one before, its new fragments' encodings are copies, not slices of
// the manifest file (which would keep every version's file alive for as
// long as the fragment lives); where most are new, slices cost nothing
// more than the file the manifest keeps anyway.
func TestFragmentEncodingsOwned(t *testing.T) {
	file := []byte("aaaabbbbccccdddd")
	raws := [][]byte{file[0:4], file[4:8], file[8:12], file[12:16]}
	inFile := func(b []byte) bool {
		p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(file)))
		return p >= lo && p < lo+uintptr(len(file))
	}
	for _, c := range []struct {
		fresh  []int
		sliced bool
	}{
		{[]int{3}, false},
		{[]int{1, 3}, true},
		{[]int{0, 1, 2, 3}, true},
	} {
		frags := make([]*Fragment, len(raws))
		for i := range frags {
			frags[i] = &Fragment{ID: uint64(i)}
		}
		setFragmentEncodings(frags, c.fresh, raws)
		for i, f := range frags {
			if !slices.Contains(c.fresh, i) {
				if f.raw != nil {
					t.Errorf("fresh %v: shared fragment %d was given an encoding", c.fresh, i)
				}
				continue
			}
			if string(f.raw) != string(raws[i]) {
				t.Errorf("fresh %v: fragment %d encoding %q, want %q", c.fresh, i, f.raw, raws[i])
			}
			if inFile(f.raw) != c.sliced {
				t.Errorf("fresh %v: fragment %d sliced from the file = %v, want %v", c.fresh, i, inFile(f.raw), c.sliced)
			}
			if cap(f.raw) != len(f.raw) {
				t.Errorf("fresh %v: fragment %d encoding can grow into its neighbour's", c.fresh, i)
			}
		}
	}
}

// TestPairFragments: every id of either list is paired once, with the
// fragment of each list holding it, whether the lists are in id order
// (walked together) or not (matched through a map).
func TestPairFragments(t *testing.T) {
	frags := func(ids ...uint64) []*Fragment {
		out := make([]*Fragment, len(ids))
		for i, id := range ids {
			out[i] = &Fragment{ID: id}
		}
		return out
	}
	for _, c := range []struct {
		a, b []*Fragment
		want []string
	}{
		{frags(), frags(), nil},
		{frags(1, 2, 3), frags(1, 2, 3), []string{"1:1", "2:2", "3:3"}},
		{frags(1, 2, 3), frags(2, 3, 4), []string{"1:-", "2:2", "3:3", "-:4"}},
		{frags(1, 3, 5), frags(2, 4), []string{"1:-", "-:2", "3:-", "-:4", "5:-"}},
		{frags(), frags(7, 8), []string{"-:7", "-:8"}},
		{frags(7, 8), frags(), []string{"7:-", "8:-"}},
		{frags(3, 1, 2), frags(2, 9, 3), []string{"1:-", "2:2", "3:3", "-:9"}},
		{frags(1, 2), frags(4, 2, 3), []string{"1:-", "2:2", "-:3", "-:4"}},
	} {
		type pair struct {
			id  uint64
			str string
		}
		var pairs []pair
		pairFragments(c.a, c.b, func(old, f *Fragment) {
			if old != nil && f != nil && old.ID != f.ID {
				t.Errorf("paired ids %d and %d", old.ID, f.ID)
			}
			p := pair{str: "-:-"}
			switch {
			case old == nil:
				p.id, p.str = f.ID, fmt.Sprintf("-:%d", f.ID)
			case f == nil:
				p.id, p.str = old.ID, fmt.Sprintf("%d:-", old.ID)
			default:
				p.id, p.str = f.ID, fmt.Sprintf("%d:%d", old.ID, f.ID)
			}
			pairs = append(pairs, p)
		})
		// The walk in order pairs in id order, the map in b's order then
		// a's: compare in id order.
		slices.SortFunc(pairs, func(x, y pair) int { return cmp.Compare(x.id, y.id) })
		var got []string
		for _, p := range pairs {
			got = append(got, p.str)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("pair %v with %v: %v, want %v", ids(c.a), ids(c.b), got, c.want)
		}
	}
}

func ids(frags []*Fragment) []uint64 {
	out := make([]uint64, len(frags))
	for i, f := range frags {
		out[i] = f.ID
	}
	return out
}
