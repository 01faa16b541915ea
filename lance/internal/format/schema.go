package format

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// Field is one node of a table or data file schema. Lance stores the
// schema flattened depth first; Field is the rebuilt tree. Fields are
// immutable once their schema is built.
type Field struct {
	ID          int32
	ParentID    int32 // -1 for top-level fields
	Name        string
	LogicalType string // Lance's type string, e.g. "int64", "timestamp:us:-"
	Nullable    bool
	Metadata    map[string]string
	Children    []*Field
}

// Schema is a table or data file schema: top-level fields and schema
// metadata. It is immutable once built and safe to share.
type Schema struct {
	Fields   []*Field
	Metadata map[string]string
	byID     map[int32]*Field
	// arrow is the Arrow schema Arrow converted it to: a Schema is not
	// edited once built, and manifests of one table share it while it
	// stays the same (a refresh converts its source's every time).
	arrow atomic.Pointer[arrow.Schema]
}

// FieldByID returns the field (at any depth) with the given id, or nil.
func (s *Schema) FieldByID(id int32) *Field { return s.byID[id] }

// MaxFieldID returns the largest field id, or -1 for an empty schema.
func (s *Schema) MaxFieldID() int32 {
	maxID := int32(-1)
	for id := range s.byID {
		maxID = max(maxID, id)
	}
	return maxID
}

// NewSchema rebuilds the field tree of a flattened Lance field list (a
// manifest's or a data file's) and checks it, once for every layer: ids
// unique and non-negative, every parent known and no cycles, a list with
// exactly one child, only structs and lists (and a fixed-size list, with
// at most one item field) with children. Violations wrap ErrCorrupt.
func NewSchema(pbFields []*tablepb.Field, meta map[string][]byte) (*Schema, error) {
	s := &Schema{Metadata: BytesMap(meta), byID: make(map[int32]*Field, len(pbFields))}
	order := make([]*Field, 0, len(pbFields))
	for _, pf := range pbFields {
		f := &Field{
			ID:          pf.GetId(),
			ParentID:    pf.GetParentId(),
			Name:        pf.GetName(),
			LogicalType: pf.GetLogicalType(),
			Nullable:    pf.GetNullable(),
			Metadata:    BytesMap(pf.GetMetadata()),
		}
		if f.ID < 0 {
			return nil, Corruptf("field %q has negative id %d", f.Name, f.ID)
		}
		if _, dup := s.byID[f.ID]; dup {
			return nil, Corruptf("field id %d appears twice", f.ID)
		}
		s.byID[f.ID] = f
		order = append(order, f)
	}
	for _, f := range order {
		if f.ParentID == -1 {
			s.Fields = append(s.Fields, f)
			continue
		}
		p := s.byID[f.ParentID]
		if p == nil {
			return nil, Corruptf("field %q (id %d) has unknown parent %d", f.Name, f.ID, f.ParentID)
		}
		p.Children = append(p.Children, f)
	}
	// Every field must hang from a top-level field; anything else is a cycle.
	reached := 0
	var walk func(f *Field, depth int) error
	walk = func(f *Field, depth int) error {
		if depth > len(order) {
			return Corruptf("field %q (id %d) is part of a parent cycle", f.Name, f.ID)
		}
		reached++
		switch {
		case f.IsList() && len(f.Children) != 1:
			return Corruptf("list field %d (%q) has %d children, want 1", f.ID, f.Name, len(f.Children))
		case !f.IsStruct() && !f.IsList() && len(f.Children) > 0 &&
			!(strings.HasPrefix(f.LogicalType, "fixed_size_list:") && len(f.Children) == 1):
			return Corruptf("field %d (%q) of type %q has children", f.ID, f.Name, f.LogicalType)
		}
		for _, c := range f.Children {
			if err := walk(c, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	for _, f := range s.Fields {
		if err := walk(f, 0); err != nil {
			return nil, err
		}
	}
	if reached != len(order) {
		return nil, Corruptf("%d fields are not reachable from a top-level field", len(order)-reached)
	}
	return s, nil
}

// IsStruct reports whether the field is a struct (its children are its
// members).
func (f *Field) IsStruct() bool { return f.LogicalType == "struct" }

// IsList reports whether the field is a list or large list (its one child
// is the item field).
func (f *Field) IsList() bool {
	switch f.LogicalType {
	case "list", "large_list", "list.struct", "large_list.struct":
		return true
	}
	return false
}

// BytesMap converts protobuf bytes metadata to strings (nil when empty).
func BytesMap(m map[string][]byte) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

// Arrow converts the schema to an Arrow schema, with schema and field
// metadata, as LanceDB's scan reports it.
func (s *Schema) Arrow() (*arrow.Schema, error) {
	if as := s.arrow.Load(); as != nil {
		return as, nil
	}
	fields := make([]arrow.Field, len(s.Fields))
	for i, f := range s.Fields {
		af, err := f.Arrow()
		if err != nil {
			return nil, err
		}
		fields[i] = af
	}
	md := ArrowMetadata(s.Metadata)
	as := arrow.NewSchema(fields, &md)
	s.arrow.Store(as)
	return as, nil
}

// Arrow converts the field (and its children) to an Arrow field.
func (f *Field) Arrow() (arrow.Field, error) {
	dt, err := f.ArrowType()
	if err != nil {
		return arrow.Field{}, err
	}
	return arrow.Field{Name: f.Name, Type: dt, Nullable: f.Nullable, Metadata: ArrowMetadata(f.Metadata)}, nil
}

// ArrowType returns the Arrow type of the field.
func (f *Field) ArrowType() (arrow.DataType, error) {
	dt, err := logicalToArrow(f.LogicalType, f.Children)
	if err != nil {
		return nil, fmt.Errorf("field %q (id %d): %w", f.Name, f.ID, err)
	}
	return dt, nil
}

// ArrowMetadata converts string metadata to Arrow metadata, keys sorted.
func ArrowMetadata(m map[string]string) arrow.Metadata {
	if len(m) == 0 {
		return arrow.Metadata{}
	}
	keys := slices.Sorted(maps.Keys(m))
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = m[k]
	}
	return arrow.NewMetadata(keys, vals)
}

// FieldByName returns the top-level field with the given name, or nil.
func (s *Schema) FieldByName(name string) *Field {
	for _, f := range s.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// ColumnList names the top-level columns ("a, b, c"), for error messages.
func (s *Schema) ColumnList() string {
	names := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// Flatten lists every field, depth first (parents before children), as
// Lance stores the schema.
func (s *Schema) Flatten() []*Field {
	var out []*Field
	var walk func(f *Field)
	walk = func(f *Field) {
		out = append(out, f)
		for _, c := range f.Children {
			walk(c)
		}
	}
	for _, f := range s.Fields {
		walk(f)
	}
	return out
}
