package datawriter

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// valueKind is how a leaf's values are laid out.
type valueKind int

const (
	kindFixed    valueKind = iota // little-endian fixed-width values
	kindBool                      // one bit per value
	kindVariable                  // byte strings
	kindFSL                       // fixed-size list of fixed-width items
)

// leaf is one column of a 2.1+ file: a leaf field and the arrays on the
// path to it, outermost (the top-level field) first. Structs and one list
// level are folded into the leaf's repetition and definition levels.
type leaf struct {
	field *lance.Field
	path  []arrow.Array
	kind  valueKind
	bits  int // value width in bits (fixed, FSL item)
	dim   int // FSL items per value

	// Slots are the leaf's visible values (lance-format.md §3.3): one per
	// row without lists; one per item of a non-empty, non-null list with
	// one. vals holds them; idx maps slot → index in vals (nil: identity);
	// null marks null slots (nil: none).
	vals  arrow.Array
	idx   []int
	null  []bool
	slots int

	// Levels: one per slot without lists; with a list, also one per null or
	// empty list. def is nil when every layer is all-valid, rep nil without
	// lists. maxVisible is the highest def level that still has a slot.
	def, rep   []uint16
	maxVisible uint16
	layers     []enc21pb.RepDefLayer
}

// leaves lists the columns of a top-level field, in schema order.
func leaves(f *lance.Field, arr arrow.Array) ([]*leaf, error) {
	var out []*leaf
	var walk func(f *lance.Field, path []arrow.Array, inList bool) error
	walk = func(f *lance.Field, path []arrow.Array, inList bool) error {
		a := path[len(path)-1]
		if !f.Nullable && a.NullN() > 0 && !inList {
			// Arrow lets a child be null under a null parent; only a null
			// under valid ancestors breaks the schema.
			for r := 0; r < a.Len(); r++ {
				if a.IsNull(r) && validAncestors(path, r) {
					return mismatchf("field %q is not nullable but row %d is null", f.Name, r)
				}
			}
		}
		if !f.Nullable && inList && a.NullN() > 0 {
			return mismatchf("list items %q are not nullable but %d are null", f.Name, a.NullN())
		}
		add := func(l *leaf) error {
			l.field, l.path = f, path
			out = append(out, l)
			return nil
		}
		switch t := a.DataType().(type) {
		case *arrow.StructType:
			if inList {
				return unsupportedf("field %q: structs inside lists are not written yet", f.Name)
			}
			sa := a.(*array.Struct)
			if len(f.Children) != t.NumFields() {
				return mismatchf("struct %q has %d fields, the schema %d", f.Name, t.NumFields(), len(f.Children))
			}
			for i, c := range f.Children {
				if err := walk(c, append(path[:len(path):len(path)], sa.Field(i)), false); err != nil {
					return err
				}
			}
			return nil
		case *arrow.ListType, *arrow.LargeListType:
			if inList || len(path) != 1 {
				return unsupportedf("field %q: only top-level lists of scalars are written", f.Name)
			}
			if len(f.Children) != 1 {
				return mismatchf("list %q has %d child fields", f.Name, len(f.Children))
			}
			items := a.(array.ListLike).ListValues()
			return walk(f.Children[0], []arrow.Array{a, items}, true)
		case *arrow.MapType:
			return unsupportedf("field %q: map types are not written", f.Name)
		case *arrow.FixedSizeListType:
			it, ok := t.Elem().(arrow.FixedWidthDataType)
			if !ok || t.Elem().ID() == arrow.BOOL || inList {
				return unsupportedf("field %q: fixed_size_list of %s", f.Name, t.Elem())
			}
			return add(&leaf{kind: kindFSL, bits: it.BitWidth(), dim: int(t.Len())})
		case *arrow.BooleanType:
			return add(&leaf{kind: kindBool, bits: 1})
		case *arrow.StringType, *arrow.LargeStringType, *arrow.BinaryType, *arrow.LargeBinaryType:
			return add(&leaf{kind: kindVariable})
		case *arrow.NullType, *arrow.DictionaryType:
			return unsupportedf("field %q: type %s", f.Name, t)
		case arrow.FixedWidthDataType:
			if t.BitWidth()%8 != 0 {
				return unsupportedf("field %q: %d-bit values", f.Name, t.BitWidth())
			}
			return add(&leaf{kind: kindFixed, bits: t.BitWidth()})
		}
		return unsupportedf("field %q: type %s", f.Name, a.DataType())
	}
	if err := walk(f, []arrow.Array{arr}, false); err != nil {
		return nil, err
	}
	for _, l := range out {
		if _, isList := l.path[0].(array.ListLike); isList && len(l.path) == 2 {
			l.computeListLevels()
		} else {
			l.computeDef()
		}
	}
	return out, nil
}

// validAncestors reports whether every array above the last on path is
// valid at row r (struct children share their parent's rows).
func validAncestors(path []arrow.Array, r int) bool {
	for _, p := range path[:len(path)-1] {
		if p.IsNull(r) {
			return false
		}
	}
	return true
}

// computeDef derives the definition levels of a leaf without lists. Each
// array on the path is a layer; a layer is NULLABLE_ITEM when it holds a
// null somewhere its ancestors are valid, otherwise ALL_VALID_ITEM. A row's
// level is 0 when valid throughout, else 1 + the number of nullable layers
// inside the outermost null one.
func (l *leaf) computeDef() {
	n := l.path[0].Len()
	depth := len(l.path)
	l.vals, l.slots = l.path[depth-1], n
	nullAt := make([]int, n) // outermost null depth, or depth
	nullable := make([]bool, depth)
	hasNull := false
	for r := 0; r < n; r++ {
		nullAt[r] = depth
		for d, a := range l.path {
			if a.IsNull(r) {
				nullAt[r] = d
				nullable[d] = true
				hasNull = true
				break
			}
		}
	}
	l.layers = make([]enc21pb.RepDefLayer, depth)
	for d := 0; d < depth; d++ {
		layer := enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM
		if nullable[d] {
			layer = enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM
		}
		l.layers[depth-1-d] = layer // inner-most first
	}
	if !hasNull {
		return
	}
	code := make([]uint16, depth)
	inner := uint16(0)
	for d := depth - 1; d >= 0; d-- {
		if nullable[d] {
			code[d] = inner + 1
			inner++
		}
	}
	l.def = make([]uint16, n)
	l.null = make([]bool, n)
	for r, d := range nullAt {
		if d < depth {
			l.def[r] = code[d]
			l.null[r] = true
		}
	}
	l.maxVisible = inner
}

// computeListLevels derives the levels of a top-level list of scalars:
// rep 1 starts a row, 0 continues it; def 0 is a valid item, then (when
// present) null item, null list, empty list, in that order.
func (l *leaf) computeListLevels() {
	list, items := l.path[0].(array.ListLike), l.path[1]
	n := list.Len()
	itemNulls, listNulls, empties := false, false, false
	for r := 0; r < n; r++ {
		if list.IsNull(r) {
			listNulls = true
			continue
		}
		s, e := list.ValueOffsets(r)
		if s == e {
			empties = true
		}
		for j := s; j < e; j++ {
			if items.IsNull(int(j)) {
				itemNulls = true
			}
		}
	}
	var itemNull, listNull, listEmpty uint16
	next := uint16(1)
	itemLayer := enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM
	if itemNulls {
		itemLayer, itemNull = enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM, next
		next++
	}
	l.maxVisible = next - 1
	listLayer := enc21pb.RepDefLayer_REPDEF_ALL_VALID_LIST
	switch {
	case listNulls && empties:
		listLayer, listNull, listEmpty = enc21pb.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST, next, next+1
	case listNulls:
		listLayer, listNull = enc21pb.RepDefLayer_REPDEF_NULLABLE_LIST, next
	case empties:
		listLayer, listEmpty = enc21pb.RepDefLayer_REPDEF_EMPTYABLE_LIST, next
	}
	l.layers = []enc21pb.RepDefLayer{itemLayer, listLayer}
	l.vals = items
	hasDef := itemNulls || listNulls || empties
	for r := 0; r < n; r++ {
		if list.IsNull(r) || func() bool { s, e := list.ValueOffsets(r); return s == e }() {
			l.rep = append(l.rep, 1)
			if list.IsNull(r) {
				l.def = append(l.def, listNull)
			} else {
				l.def = append(l.def, listEmpty)
			}
			continue
		}
		s, e := list.ValueOffsets(r)
		for j := s; j < e; j++ {
			rep := uint16(0)
			if j == s {
				rep = 1
			}
			l.rep = append(l.rep, rep)
			d := uint16(0)
			if items.IsNull(int(j)) {
				d = itemNull
			}
			l.def = append(l.def, d)
			l.idx = append(l.idx, int(j))
			l.null = append(l.null, d != 0)
		}
	}
	l.slots = len(l.idx)
	if !hasDef {
		l.def = nil
	}
	if !itemNulls {
		l.null = nil
	}
}

// index returns the position in vals of slot s.
func (l *leaf) index(s int) int {
	if l.idx == nil {
		return s
	}
	return l.idx[s]
}

// visible reports whether slot s holds a value (is not null).
func (l *leaf) visible(s int) bool { return l.null == nil || !l.null[s] }
