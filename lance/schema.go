package lance

import (
	"fmt"
	"maps"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// Field is one node of a table schema. Lance stores the schema flattened
// depth first; Field is the rebuilt tree.
type Field struct {
	ID          int32
	ParentID    int32 // -1 for top-level fields
	Name        string
	LogicalType string // Lance's type string, e.g. "int64", "timestamp:us:-"
	Nullable    bool
	Metadata    map[string]string
	Children    []*Field
}

// Schema is a table schema: top-level fields and schema metadata.
type Schema struct {
	Fields   []*Field
	Metadata map[string]string
	byID     map[int32]*Field
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

// newSchema rebuilds the field tree of a flattened Lance field list.
func newSchema(pbFields []*tablepb.Field, meta map[string][]byte) (*Schema, error) {
	s := &Schema{Metadata: bytesMap(meta), byID: make(map[int32]*Field, len(pbFields))}
	order := make([]*Field, 0, len(pbFields))
	for _, pf := range pbFields {
		f := &Field{
			ID:          pf.GetId(),
			ParentID:    pf.GetParentId(),
			Name:        pf.GetName(),
			LogicalType: pf.GetLogicalType(),
			Nullable:    pf.GetNullable(),
			Metadata:    bytesMap(pf.GetMetadata()),
		}
		if f.ID < 0 {
			return nil, corruptf("field %q has negative id %d", f.Name, f.ID)
		}
		if _, dup := s.byID[f.ID]; dup {
			return nil, corruptf("field id %d appears twice", f.ID)
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
			return nil, corruptf("field %q (id %d) has unknown parent %d", f.Name, f.ID, f.ParentID)
		}
		p.Children = append(p.Children, f)
	}
	// Every field must hang from a top-level field; anything else is a cycle.
	reached := 0
	var walk func(f *Field, depth int) error
	walk = func(f *Field, depth int) error {
		if depth > len(order) {
			return corruptf("field %q (id %d) is part of a parent cycle", f.Name, f.ID)
		}
		reached++
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
		return nil, corruptf("%d fields are not reachable from a top-level field", len(order)-reached)
	}
	return s, nil
}

func bytesMap(m map[string][]byte) map[string]string {
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
	fields := make([]arrow.Field, len(s.Fields))
	for i, f := range s.Fields {
		af, err := f.Arrow()
		if err != nil {
			return nil, err
		}
		fields[i] = af
	}
	md := arrowMetadata(s.Metadata)
	return arrow.NewSchema(fields, &md), nil
}

// Arrow converts the field (and its children) to an Arrow field.
func (f *Field) Arrow() (arrow.Field, error) {
	dt, err := f.ArrowType()
	if err != nil {
		return arrow.Field{}, err
	}
	return arrow.Field{Name: f.Name, Type: dt, Nullable: f.Nullable, Metadata: arrowMetadata(f.Metadata)}, nil
}

// ArrowType returns the Arrow type of the field.
func (f *Field) ArrowType() (arrow.DataType, error) {
	dt, err := logicalToArrow(f.LogicalType, f.Children)
	if err != nil {
		return nil, fmt.Errorf("field %q (id %d): %w", f.Name, f.ID, err)
	}
	return dt, nil
}

func arrowMetadata(m map[string]string) arrow.Metadata {
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

// fieldByName returns the top-level field with the given name, or nil.
func (s *Schema) fieldByName(name string) *Field {
	for _, f := range s.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// columnList names the top-level columns, for error messages.
func (s *Schema) columnList() string {
	var b []byte
	for i, f := range s.Fields {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, f.Name...)
	}
	return string(b)
}
