package datafile

import (
	"fmt"
	"strings"

	"github.com/mvd-project/mvd/lance/internal/format"
)

// fieldNode is one field of the schema tree with the column that stores it
// (-1 when it has none, as for 2.1+ parents).
type fieldNode struct {
	f        *format.Field
	children []*fieldNode
	column   int
}

// fieldTree is the schema's field tree with columns assigned.
type fieldTree struct {
	top        []*fieldNode
	byID       map[int32]*fieldNode
	numColumns int
}

// isStructType and isListType classify logical types that have children.
func isStructType(lt string) bool { return lt == "struct" }

func isListType(lt string) bool {
	return lt == "list" || lt == "large_list" || lt == "list.struct" || lt == "large_list.struct"
}

// buildTree assigns columns to the fields of a schema (already built and
// checked by format.NewSchema) in depth-first order: to every field in 2.0
// (allFields), to leaves otherwise.
func buildTree(s *format.Schema, allFields bool) (*fieldTree, error) {
	t := &fieldTree{byID: make(map[int32]*fieldNode)}
	var walk func(f *format.Field) (*fieldNode, error)
	walk = func(f *format.Field) (*fieldNode, error) {
		n := &fieldNode{f: f, column: -1}
		t.byID[f.ID] = n
		parent := f.IsStruct() || f.IsList()
		if !parent && len(f.Children) != 0 {
			// A fixed-size list's optional item field has no column.
			return nil, fmt.Errorf("%w: field %d (%q) of type %q has children, which a data file does not store", format.ErrUnsupported, f.ID, f.Name, f.LogicalType)
		}
		if allFields || !parent {
			n.column = t.numColumns
			t.numColumns++
		}
		for _, c := range f.Children {
			cn, err := walk(c)
			if err != nil {
				return nil, err
			}
			n.children = append(n.children, cn)
		}
		return n, nil
	}
	for _, f := range s.Fields {
		n, err := walk(f)
		if err != nil {
			return nil, err
		}
		t.top = append(t.top, n)
	}
	return t, nil
}

// leaves lists the leaf nodes under n, depth first.
func (n *fieldNode) leaves() []*fieldNode {
	if len(n.children) == 0 {
		return []*fieldNode{n}
	}
	var out []*fieldNode
	for _, c := range n.children {
		out = append(out, c.leaves()...)
	}
	return out
}

// String names the field in error messages.
func (n *fieldNode) String() string {
	return fmt.Sprintf("field %d (%s)", n.f.ID, strings.TrimSpace(n.f.Name))
}
