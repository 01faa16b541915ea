package lance

import (
	"context"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/mvd-project/mvd/lance/internal/format"
	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// HeadSchema returns the schema of the version h names, decoding only the
// manifest's schema and flags, not its fragments. A caller that needs a
// table's schema alone (a listing of the views of a database reads each
// table's mv.definition) then pays for the schema, not for the table's
// fragment count: a source LanceDB commits to one row at a time holds a
// fragment per commit, thousands of them, and decoding them all on every
// listing cost more than the refreshes (issue 22). The same checks as a
// decode apply: unknown reader flags and external base paths are refused.
// h must come from t.Head.
func (t *Table) HeadSchema(ctx context.Context, h *Head) (*Schema, error) {
	if err := ctx.Err(); err != nil {
		return nil, t.wrap(h.Version, "read schema", err)
	}
	if h.m != nil {
		return h.m.Schema, nil
	}
	if m := t.cache.get(keyOf(h.ref.File, h.info)); m != nil {
		return m.Schema, nil
	}
	op := "decode manifest " + h.ref.File
	section, err := manifestSection(h.raw)
	if err != nil {
		return nil, t.wrap(h.Version, op, err)
	}
	rest, err := withoutFragments(section)
	if err != nil {
		return nil, t.wrap(h.Version, op, err)
	}
	pb := &tablepb.Manifest{}
	if err := proto.Unmarshal(rest, pb); err != nil {
		return nil, t.wrap(h.Version, op, corruptf("manifest protobuf: %v", err))
	}
	if pb.GetVersion() != h.Version {
		return nil, t.versionMismatch(h.ref, pb.GetVersion())
	}
	if err := checkReaderFlags(pb.GetReaderFeatureFlags()); err != nil {
		return nil, t.wrap(h.Version, op, err)
	}
	if len(pb.GetBasePaths()) > 0 {
		return nil, t.wrap(h.Version, op, unsupportedf("manifest lists %d external base paths", len(pb.GetBasePaths())))
	}
	s, err := format.NewSchema(pb.GetFields(), pb.GetSchemaMetadata())
	if err != nil {
		return nil, t.wrap(h.Version, op, err)
	}
	return s, nil
}

// withoutFragments returns a Manifest protobuf's encoding without its
// fragments (the top-level fields are walked, not decoded).
func withoutFragments(section []byte) ([]byte, error) {
	out := make([]byte, 0, 4096)
	for b := section; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, corruptf("manifest protobuf: %v", protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, corruptf("manifest protobuf: field %d: %v", num, protowire.ParseError(m))
		}
		if num != manifestFragmentsField {
			out = append(out, b[:n+m]...)
		}
		b = b[n+m:]
	}
	return out, nil
}
