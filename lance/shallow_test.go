package lance

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// TestShallowManifest: a shallow copy equals its source with every field
// of the message set (a field added to the message but not to the copy
// fails here), carries unknown fields, and has its own fragment list and
// schema metadata map.
func TestShallowManifest(t *testing.T) {
	src := &tablepb.Manifest{}
	m := src.ProtoReflect()
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			mp.Set(protoreflect.ValueOfString("k").MapKey(), sample(fd.MapValue(), m.Mutable(fd).Map().NewValue()))
		case fd.IsList():
			l := m.Mutable(fd).List()
			l.Append(sample(fd, l.NewElement()))
		default:
			var v protoreflect.Value
			if fd.Message() != nil {
				v = m.Mutable(fd)
				fillFirst(v.Message())
			} else {
				v = sample(fd, protoreflect.Value{})
			}
			m.Set(fd, v)
		}
	}
	m.SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 999, protowire.VarintType), 7))
	for i := range fields.Len() {
		if !m.Has(fields.Get(i)) {
			t.Fatalf("test setup: field %s not set", fields.Get(i).Name())
		}
	}
	dst := shallowManifest(src)
	if !proto.Equal(dst, src) {
		t.Fatalf("shallow copy differs:\n%v\nwant\n%v", dst, src)
	}
	dst.Fragments[0] = &tablepb.DataFragment{Id: 42}
	dst.SchemaMetadata["k"] = []byte("changed")
	if src.Fragments[0].GetId() == 42 || string(src.SchemaMetadata["k"]) == "changed" {
		t.Fatal("the copy shares its fragment list or schema metadata with the source")
	}
}

// sample returns a non-default value for a scalar field (a message value
// given as v is filled instead).
func sample(fd protoreflect.FieldDescriptor, v protoreflect.Value) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		fillFirst(v.Message())
		return v
	case protoreflect.StringKind:
		return protoreflect.ValueOfString("s")
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte("b"))
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(1)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(3)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(3)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(3)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(3)
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(3)
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(3)
	}
	panic("unhandled kind " + fd.Kind().String())
}

// fillFirst sets the first scalar field of msg, so that it is not empty.
func fillFirst(msg protoreflect.Message) {
	fields := msg.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if !fd.IsList() && !fd.IsMap() && fd.Message() == nil {
			msg.Set(fd, sample(fd, protoreflect.Value{}))
			return
		}
	}
}
