package datawriter

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/mvd-project/mvd/lance/internal/format"
	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// valueKind is how a leaf's values are laid out.
type valueKind int

const (
	kindFixed    valueKind = iota // little-endian fixed-width values
	kindBool                      // one bit per value
	kindVariable                  // byte strings
	kindFSL                       // fixed-size list of fixed-width items
	kindNull                      // the null type: no values at all
)

// leaf is one column of a 2.1+ file: a leaf field and the arrays (and
// their fields) on the path to it, outermost (the top-level field) first.
// Structs and lists are folded into the leaf's repetition and definition
// levels.
type leaf struct {
	field  *format.Field
	path   []arrow.Array
	fields []*format.Field
	kind   valueKind
	bits   int // value width in bits (fixed, FSL item, dictionary key)
	dim    int // FSL items per value
	// dict is set for a dictionary-typed leaf: vals are its keys.
	dict *array.Dictionary
	// strItems are the dictionary of a string or binary leaf rewritten as
	// u32 keys (stringDictionary): vals are the keys, one per slot.
	strItems [][]byte
	// fixedItems are the dictionary of a fixed-width leaf rewritten as u32
	// keys (fixedDictionary), each fixedBits wide: vals are the keys.
	fixedItems [][]byte
	fixedBits  int
	// fsstTable is the FSST symbol table of a string leaf whose values
	// were compressed with it (fsstLeaf): vals are the codes.
	fsstTable []byte

	// Slots are the leaf's visible values (lance-format.md §3.3): one per
	// row without lists; with lists, one per item of the inner-most lists
	// (null or not), none for a null or empty list or a null above one.
	// vals holds them; idx maps slot → index in vals (nil: identity); null
	// marks null slots (nil: none).
	vals  arrow.Array
	idx   []int
	null  []bool
	slots int

	// Levels: one per slot without lists; with lists, also one per null or
	// empty list. def is nil when every layer is all-valid, rep nil without
	// lists. maxVisible is the highest def level that still has a slot;
	// maxRep (the number of lists) starts a row.
	def, rep   []uint16
	maxVisible uint16
	maxRep     uint16
	layers     []enc21pb.RepDefLayer

	// widths, when set, are the bit widths of the page's bit-packed
	// chunks of 1024 values (packable); nil: values are written flat.
	widths []uint8
	// repW and defW are the bit widths a mini-block page's levels are
	// packed to (levelWidth); 0: flat u16s.
	repW, defW int
}

// leaves lists the columns of a top-level field, in schema order, with
// their rep/def levels computed.
func leaves(f *format.Field, arr arrow.Array) ([]*leaf, error) {
	var out []*leaf
	var walk func(f *format.Field, path []arrow.Array, fields []*format.Field) error
	walk = func(f *format.Field, path []arrow.Array, fields []*format.Field) error {
		a := path[len(path)-1]
		add := func(l *leaf) error {
			l.field, l.path, l.fields = f, path, fields
			out = append(out, l)
			return nil
		}
		switch t := a.DataType().(type) {
		case *arrow.StructType:
			sa := a.(*array.Struct)
			if len(f.Children) != t.NumFields() {
				return mismatchf("struct %q has %d fields, the schema %d", f.Name, t.NumFields(), len(f.Children))
			}
			for i, c := range f.Children {
				if err := walk(c, extend(path, sa.Field(i)), extend(fields, c)); err != nil {
					return err
				}
			}
			return nil
		case *arrow.ListType, *arrow.LargeListType:
			if len(f.Children) != 1 {
				return mismatchf("list %q has %d child fields", f.Name, len(f.Children))
			}
			items := a.(array.ListLike).ListValues()
			return walk(f.Children[0], extend(path, items), extend(fields, f.Children[0]))
		case *arrow.MapType:
			return unsupportedf("field %q: map types are not written", fieldPath(fields))
		case *arrow.FixedSizeListType:
			it, ok := t.Elem().(arrow.FixedWidthDataType)
			if !ok || t.Elem().ID() == arrow.BOOL {
				// mvd's reader refuses fixed_size_list<bool> too.
				return unsupportedf("field %q: fixed_size_list of %s", fieldPath(fields), t.Elem())
			}
			return add(&leaf{kind: kindFSL, bits: it.BitWidth(), dim: int(t.Len())})
		case *arrow.BooleanType:
			return add(&leaf{kind: kindBool, bits: 1})
		case *arrow.StringType, *arrow.LargeStringType, *arrow.BinaryType, *arrow.LargeBinaryType:
			return add(&leaf{kind: kindVariable})
		case *arrow.DictionaryType:
			if err := checkDictionary(f, t); err != nil {
				return err
			}
			d := a.(*array.Dictionary)
			return add(&leaf{kind: kindFixed, bits: t.IndexType.(arrow.FixedWidthDataType).BitWidth(), dict: d})
		case *arrow.NullType:
			return add(&leaf{kind: kindNull})
		case arrow.FixedWidthDataType:
			if t.BitWidth()%8 != 0 {
				return unsupportedf("field %q: %d-bit values", fieldPath(fields), t.BitWidth())
			}
			return add(&leaf{kind: kindFixed, bits: t.BitWidth()})
		}
		return unsupportedf("field %q: type %s", fieldPath(fields), a.DataType())
	}
	if err := walk(f, []arrow.Array{arr}, []*format.Field{f}); err != nil {
		return nil, err
	}
	for _, l := range out {
		if err := l.computeLevels(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fieldPath names a nested field by its path ("a.item.b").
func fieldPath(fields []*format.Field) string {
	var b strings.Builder
	for i, f := range fields {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(f.Name)
	}
	return b.String()
}

// extend returns s with v appended, never sharing s's backing array (paths
// of sibling leaves must not alias).
func extend[T any](s []T, v T) []T {
	return append(s[:len(s):len(s)], v)
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
