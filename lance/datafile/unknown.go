package datafile

import (
	"google.golang.org/protobuf/reflect/protoreflect"
)

// checkKnown refuses an encoding description carrying fields this reader
// does not know: a newer writer may have added one that changes the bytes
// (as has_large_chunk did), and guessing would decode garbage.
func checkKnown(m protoreflect.Message) error {
	if u := m.GetUnknown(); len(u) > 0 {
		return unsupportedErr("%s has %d bytes of fields newer than this reader", m.Descriptor().FullName(), len(u))
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len() && err == nil; i++ {
				err = checkKnown(l.Get(i).Message())
			}
		case fd.IsMap():
		case fd.Message() != nil:
			err = checkKnown(v.Message())
		}
		return err == nil
	})
	return err
}
