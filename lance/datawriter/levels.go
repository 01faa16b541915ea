package datawriter

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// levelEvent is what one rep/def level records before def codes are
// known: a valid leaf value, or a null or empty list at some depth of the
// leaf's path.
type levelEvent struct {
	rep   uint16
	depth int32 // depth of the null or empty array; -1 for a valid leaf value
	empty bool
	leaf  int // index in the leaf array (visible levels only)
}

// computeLevels derives a leaf's repetition and definition levels from
// the arrays on its path, for any nesting of structs and lists
// (lance-format.md §3.3). Each array on the path is one layer: a struct or
// the leaf is an item layer (nullable when a null is reachable), a list a
// list layer (nullable and/or emptyable as observed). Def codes count up
// from the inner-most layer; rep is the number of lists that start at a
// level, max_rep starting a row. A null or empty list, or any null above
// the inner-most list, is a level without a value slot.
func (l *leaf) computeLevels() error {
	depth := len(l.path)
	isList := make([]bool, depth)
	maxRep := uint16(0)
	for d, a := range l.path {
		if isListType(a.DataType()) && d < depth-1 {
			isList[d] = true
			maxRep++
		}
	}
	// innerLists[d] is the number of lists strictly inside depth d: the rep
	// of a level that starts a new item of the list at d.
	innerLists := make([]uint16, depth)
	for d := depth - 2; d >= 0; d-- {
		innerLists[d] = innerLists[d+1]
		if isList[d+1] {
			innerLists[d]++
		}
	}
	if maxRep == 0 && l.allValid() {
		// The common case needs no levels at all: one slot per row.
		l.layers = make([]enc21pb.RepDefLayer, depth)
		for d := range l.layers {
			l.layers[d] = enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM
		}
		l.vals, l.slots = l.path[depth-1], l.path[0].Len()
		return nil
	}
	hasNull := make([]bool, depth)
	hasEmpty := make([]bool, depth)
	// At least one event per row: sizing it up front spares the copies of
	// repeated growth, which dominated writing a million nullable rows.
	events := make([]levelEvent, 0, l.path[0].Len())
	var visit func(d, i int, rep uint16) error
	visit = func(d, i int, rep uint16) error {
		a := l.path[d]
		// A null-typed leaf has no validity bitmap: every item is null.
		if a.IsNull(i) || (d == depth-1 && (l.kind == kindNull || l.dict != nil && dictNull(a, i))) {
			if !l.fields[d].Nullable {
				return mismatchf("field %q is not nullable but holds a null (index %d)", l.fields[d].Name, i)
			}
			hasNull[d] = true
			events = append(events, levelEvent{rep: rep, depth: int32(d), leaf: i})
			return nil
		}
		if d == depth-1 {
			events = append(events, levelEvent{rep: rep, depth: -1, leaf: i})
			return nil
		}
		if !isList[d] {
			return visit(d+1, i, rep) // struct children share the struct's rows
		}
		s, e := a.(array.ListLike).ValueOffsets(i)
		if s == e {
			hasEmpty[d] = true
			events = append(events, levelEvent{rep: rep, depth: int32(d), empty: true})
			return nil
		}
		for j := s; j < e; j++ {
			if err := visit(d+1, int(j), rep); err != nil {
				return err
			}
			rep = innerLists[d]
		}
		return nil
	}
	n := l.path[0].Len()
	for r := 0; r < n; r++ {
		if err := visit(0, r, maxRep); err != nil {
			return err
		}
	}
	// Layers and codes, inner-most first.
	nullCode := make([]uint16, depth)
	emptyCode := make([]uint16, depth)
	l.layers = make([]enc21pb.RepDefLayer, 0, depth)
	next := uint16(1)
	firstList := true
	l.maxVisible = 0
	for d := depth - 1; d >= 0; d-- {
		if !isList[d] {
			layer := enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM
			if hasNull[d] {
				layer, nullCode[d] = enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM, next
				next++
			}
			l.layers = append(l.layers, layer)
			continue
		}
		if firstList {
			l.maxVisible, firstList = next-1, false
		}
		layer := enc21pb.RepDefLayer_REPDEF_ALL_VALID_LIST
		switch {
		case hasNull[d] && hasEmpty[d]:
			layer, nullCode[d], emptyCode[d] = enc21pb.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST, next, next+1
			next += 2
		case hasNull[d]:
			layer, nullCode[d] = enc21pb.RepDefLayer_REPDEF_NULLABLE_LIST, next
			next++
		case hasEmpty[d]:
			layer, emptyCode[d] = enc21pb.RepDefLayer_REPDEF_EMPTYABLE_LIST, next
			next++
		}
		l.layers = append(l.layers, layer)
	}
	if firstList {
		l.maxVisible = next - 1 // no lists: every level has a slot
	}
	l.maxRep = maxRep
	l.vals = l.path[depth-1]
	hasDef := next > 1
	if hasDef {
		l.def = make([]uint16, len(events))
	}
	if maxRep > 0 {
		l.rep = make([]uint16, len(events))
		l.idx = make([]int, 0, len(events))
	}
	anyNullSlot := false
	for k, ev := range events {
		code := uint16(0)
		if ev.depth >= 0 {
			code = nullCode[ev.depth]
			if ev.empty {
				code = emptyCode[ev.depth]
			}
		}
		if hasDef {
			l.def[k] = code
		}
		if maxRep > 0 {
			l.rep[k] = ev.rep
		}
		if code > l.maxVisible {
			continue // a null or empty list, or a null above one: no slot
		}
		if maxRep > 0 {
			l.idx = append(l.idx, ev.leaf)
		}
		anyNullSlot = anyNullSlot || code != 0
		l.null = append(l.null, code != 0)
	}
	l.slots = len(l.null)
	if !anyNullSlot {
		l.null = nil
	}
	return nil
}

// allValid reports whether no array on the path holds a null (nor a
// dictionary a null item).
func (l *leaf) allValid() bool {
	for _, a := range l.path {
		if a.NullN() > 0 {
			return false
		}
	}
	return l.dict == nil || l.dict.Dictionary().NullN() == 0
}

// isListType reports whether t is a variable-size list (a rep/def list
// layer).
func isListType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.LIST, arrow.LARGE_LIST:
		return true
	}
	return false
}
