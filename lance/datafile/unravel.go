package datafile

import (
	"fmt"
	"slices"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// pathNode is one step from a top-level field down to a leaf column.
type pathNode struct {
	node   *fieldNode
	isList bool
}

// nodeState accumulates the Arrow structure of one path node: a validity
// per slot and, for lists, the first child slot of each list.
type nodeState struct {
	valid  []bool
	starts []int64
	nulls  int
}

// leafData is a leaf column unravelled over a run of rows.
type leafData struct {
	path   []pathNode
	states []nodeState
	vals   []block
	fslVal [][]byte
	fslDim uint64
	nvals  uint64
	lim    limits
}

// canonical def codes: an item layer has 1 code (null), a list layer 2
// (null, then empty), whatever the page's layers say, so that pages whose
// layers differ (nullable or not) can be merged.
func canonicalCodes(isList bool) int {
	if isList {
		return 2
	}
	return 1
}

// defMapper maps a page's def levels to canonical codes.
func defMapper(layers []enc21pb.RepDefLayer, path []pathNode) ([]uint16, error) {
	if len(layers) != len(path) {
		return nil, fmt.Errorf("page has %d rep/def layers, the field has %d levels", len(layers), len(path))
	}
	table := []uint16{0}
	cbase := 0
	for i, l := range layers {
		pn := path[len(path)-1-i]
		if isListLayer(l) != pn.isList {
			return nil, fmt.Errorf("layer %d (%v) does not match %v", i, l, pn.node)
		}
		switch l {
		case enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM, enc21pb.RepDefLayer_REPDEF_NULLABLE_LIST:
			table = append(table, uint16(cbase+1))
		case enc21pb.RepDefLayer_REPDEF_EMPTYABLE_LIST:
			table = append(table, uint16(cbase+2))
		case enc21pb.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST:
			table = append(table, uint16(cbase+1), uint16(cbase+2))
		case enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM, enc21pb.RepDefLayer_REPDEF_ALL_VALID_LIST:
		default:
			return nil, unsupportedErr("unknown rep/def layer %v", l)
		}
		cbase += canonicalCodes(pn.isList)
	}
	return table, nil
}

// appendPage unravels one page's levels into the node states.
func (ld *leafData) appendPage(pd *pageData) error {
	table, err := defMapper(pd.layers, ld.path)
	if err != nil {
		return err
	}
	k := len(ld.path)
	var listIdx []int
	for i, p := range ld.path {
		if p.isList {
			listIdx = append(listIdx, i)
		}
	}
	m := len(listIdx)
	nl, err := pd.checkedLevelCount()
	if err != nil {
		return err
	}
	if m > 0 && pd.rep == nil {
		return fmt.Errorf("page of a list field has no rep levels")
	}
	// canonical base of each path node (inner-most first order reversed).
	cb := make([]int, k)
	acc := 0
	for i := k - 1; i >= 0; i-- {
		cb[i] = acc
		acc += canonicalCodes(ld.path[i].isList)
	}
	var used uint64
	rows := uint64(0)
	if m == 0 && pd.def == nil && pd.rep == nil {
		// Flat and all valid (the common column): every item is a row
		// with a value, valid at every node.
		for n := range k {
			ld.states[n].valid = appendTrue(ld.states[n].valid, nl)
		}
		rows, used, nl = nl, nl, 0
	}
	for it := uint64(0); it < nl; it++ {
		d := 0
		if pd.def != nil {
			if int(pd.def[it]) >= len(table) {
				return fmt.Errorf("def level %d at item %d exceeds the layers' %d codes", pd.def[it], it, len(table)-1)
			}
			d = int(table[pd.def[it]])
		}
		s := 0
		if pd.rep != nil {
			r := int(pd.rep[it])
			if r > m {
				return fmt.Errorf("rep level %d at item %d exceeds %d list levels", r, it, m)
			}
			if r < m {
				if it == 0 {
					return fmt.Errorf("page starts inside a row (rep %d)", r)
				}
				s = listIdx[m-r-1] + 1
			}
		}
		if s == 0 {
			rows++
		}
		// j: the outer-most node that is null or empty; code: 1 null, 2 empty.
		j, code := k, 0
		if d > 0 {
			for i := 0; i < k; i++ {
				if d > cb[i] && d <= cb[i]+canonicalCodes(ld.path[i].isList) {
					j, code = i, d-cb[i]
					break
				}
			}
			if j == k {
				return fmt.Errorf("def level %d at item %d matches no layer", d, it)
			}
		}
		if j < s {
			return fmt.Errorf("item %d continues a list but is null above it", it)
		}
		reached := true
		for n := s; n < k; n++ {
			st := &ld.states[n]
			isList := ld.path[n].isList
			valid := n < j || (n == j && isList && code == 2)
			st.valid = append(st.valid, valid)
			if !valid {
				st.nulls++
			}
			if isList {
				st.starts = append(st.starts, int64(len(ld.states[n+1].valid)))
				if n >= j {
					reached = false
					break
				}
			}
		}
		if reached {
			used++
		}
	}
	if rows != pd.numRows {
		return fmt.Errorf("page levels describe %d rows, page says %d", rows, pd.numRows)
	}
	switch {
	case pd.allNull:
		// Null slots still take a (filler) value in Arrow.
		pd.vals = block{n: used}
	case pd.constVal != nil:
		v, err := pd.constVal.expand(used, ld.lim)
		if err != nil {
			return err
		}
		pd.vals = v
	case used != pd.vals.n:
		return fmt.Errorf("page levels place %d values, page has %d", used, pd.vals.n)
	}
	ld.vals = append(ld.vals, pd.vals)
	if pd.fslDim > 0 {
		ld.fslDim = pd.fslDim
	}
	if pd.fslValidity != nil {
		ld.fslVal = append(ld.fslVal, pd.fslValidity)
	} else {
		ld.fslVal = append(ld.fslVal, nil)
	}
	ld.nvals += used
	return nil
}

// appendTrue appends n true values to s.
func appendTrue(s []bool, n uint64) []bool {
	s = slices.Grow(s, int(n))
	l := len(s)
	s = s[:l+int(n)]
	for i := l; i < len(s); i++ {
		s[i] = true
	}
	return s
}
