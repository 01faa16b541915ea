package datafile

import (
	"reflect"
	"testing"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// TestSlicePage cuts a list<string> page (nullable items, null and empty
// lists) at every row range and checks levels and values.
func TestSlicePage(t *testing.T) {
	// Rows: ["a", null], null, [], ["bc"]; layers inner-most first.
	pd := &pageData{
		layers:  []enc21pb.RepDefLayer{enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM, enc21pb.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST},
		rep:     []uint16{1, 0, 1, 1, 1},
		def:     []uint16{0, 1, 2, 3, 0},
		vals:    block{n: 3, data: []byte("abc"), offsets: []uint64{0, 1, 1, 3}},
		numRows: 4,
	}
	cases := []struct {
		a, b     uint64
		rep, def []uint16
		values   []string
	}{
		{0, 4, []uint16{1, 0, 1, 1, 1}, []uint16{0, 1, 2, 3, 0}, []string{"a", "", "bc"}},
		{0, 1, []uint16{1, 0}, []uint16{0, 1}, []string{"a", ""}},
		{1, 3, []uint16{1, 1}, []uint16{2, 3}, nil},
		{2, 4, []uint16{1, 1}, []uint16{3, 0}, []string{"bc"}},
		{3, 4, []uint16{1}, []uint16{0}, []string{"bc"}},
		{2, 2, []uint16{}, []uint16{}, nil},
	}
	for _, c := range cases {
		got, err := pd.slice(c.a, c.b)
		if err != nil {
			t.Fatalf("%d..%d: %v", c.a, c.b, err)
		}
		if !reflect.DeepEqual(got.rep, c.rep) || !reflect.DeepEqual(got.def, c.def) {
			t.Errorf("%d..%d: rep %v def %v, want %v %v", c.a, c.b, got.rep, got.def, c.rep, c.def)
		}
		var vals []string
		for i := uint64(0); i < got.vals.n; i++ {
			vals = append(vals, string(got.vals.value(i)))
		}
		if !reflect.DeepEqual(vals, c.values) || got.numRows != c.b-c.a {
			t.Errorf("%d..%d: values %q rows %d, want %q %d", c.a, c.b, vals, got.numRows, c.values, c.b-c.a)
		}
	}
	if _, err := pd.slice(3, 5); err == nil {
		t.Error("rows past the page accepted")
	}
}

// TestSliceBlock covers fixed, bit-packed and fixed-size-list blocks.
func TestSliceBlock(t *testing.T) {
	fixed := block{n: 4, bits: 16, data: []byte{1, 0, 2, 0, 3, 0, 4, 0}}
	if got, _ := sliceBlock(fixed, 1, 3); !reflect.DeepEqual(got.data, []byte{2, 0, 3, 0}) || got.n != 2 {
		t.Errorf("fixed: %+v", got)
	}
	bools := block{n: 10, bits: 1, data: []byte{0b10110110, 0b10}}
	got, _ := sliceBlock(bools, 3, 10)
	if !reflect.DeepEqual(got.data, []byte{0b1010110}) || got.n != 7 {
		t.Errorf("bools: %08b", got.data)
	}
	fsl := block{n: 3, bits: 64, dim: 2, data: make([]byte, 24), itemValid: []byte{1, 2, 3}}
	if got, _ := sliceBlock(fsl, 1, 3); !reflect.DeepEqual(got.itemValid, []byte{2, 3}) || len(got.data) != 16 {
		t.Errorf("fsl: %+v", got)
	}
	if _, err := sliceBlock(fixed, 3, 5); err == nil {
		t.Error("values past the block accepted")
	}
}
