package datafile

import (
	"fmt"
	"strings"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// fieldNode is one field of the schema tree with the column that stores it
// (-1 when it has none, as for 2.1+ parents).
type fieldNode struct {
	f        *tablepb.Field
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

// buildTree links the flattened fields by parent id and assigns columns in
// depth-first order: to every field in 2.0 (allFields), to leaves otherwise.
func buildTree(fields []*tablepb.Field, allFields bool) (*fieldTree, error) {
	t := &fieldTree{byID: make(map[int32]*fieldNode, len(fields))}
	for _, f := range fields {
		if _, dup := t.byID[f.GetId()]; dup {
			return nil, fmt.Errorf("schema lists field id %d twice", f.GetId())
		}
		n := &fieldNode{f: f, column: -1}
		t.byID[f.GetId()] = n
		if f.GetParentId() < 0 {
			t.top = append(t.top, n)
			continue
		}
		p, ok := t.byID[f.GetParentId()]
		if !ok {
			return nil, fmt.Errorf("field %d (%q) names parent %d, which does not precede it", f.GetId(), f.GetName(), f.GetParentId())
		}
		p.children = append(p.children, n)
	}
	var walk func(n *fieldNode) error
	walk = func(n *fieldNode) error {
		lt := n.f.GetLogicalType()
		parent := isStructType(lt) || isListType(lt)
		if isListType(lt) && len(n.children) != 1 {
			return fmt.Errorf("list field %d (%q) has %d children, want 1", n.f.GetId(), n.f.GetName(), len(n.children))
		}
		if !parent && len(n.children) != 0 {
			return fmt.Errorf("field %d (%q) of type %q has children", n.f.GetId(), n.f.GetName(), lt)
		}
		if allFields || !parent {
			n.column = t.numColumns
			t.numColumns++
		}
		for _, c := range n.children {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	for _, n := range t.top {
		if err := walk(n); err != nil {
			return nil, err
		}
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
	return fmt.Sprintf("field %d (%s)", n.f.GetId(), strings.TrimSpace(n.f.GetName()))
}
