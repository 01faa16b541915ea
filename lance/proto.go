package lance

import (
	"fmt"

	"google.golang.org/protobuf/proto"
)

// unmarshal decodes a protobuf message, keeping unknown fields so decoders
// can refuse what they do not understand.
func unmarshal(b []byte, m proto.Message) error {
	return proto.UnmarshalOptions{DiscardUnknown: false}.Unmarshal(b, m)
}

// wrapf adds context to err, keeping its sentinel checkable.
func wrapf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), err)
}
