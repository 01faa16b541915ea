package lance

import (
	"bytes"
	"maps"
	"slices"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/mvd-project/mvd/lance/internal/format"
	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// fragmentMemo keeps the fragments of the last manifest a table decoded,
// by their encoding. Consecutive versions share all but the fragments a
// commit touched, byte for byte, and fragments are most of a manifest's
// decoding (one message per fragment, each with its files and sequences):
// decoding the next version through the memo unmarshals only the changed
// ones. Decoded fragment messages are shared between manifests, as
// commits already share them (shallowManifest): they are never edited.
//
// The next version's fragments are matched by position first, byte for
// byte: a commit most often appends fragments or changes a few in place,
// and a memcmp per fragment costs far less than hashing each encoding
// into a map (with a fragment per commit, as a source LanceDB commits to
// one row at a time holds, the hashing followed the table's fragment
// count and was most of each decode; issue 22). Only when many differ at
// their position (fragments removed or reordered) are the others looked
// up by encoding, in a map built for that decode.
//
// A fragmentMemo is safe for concurrent use.
type fragmentMemo struct {
	mu sync.Mutex
	// raws and pbs are the last manifest's fragment encodings and their
	// messages, in order.
	raws [][]byte
	pbs  []*tablepb.DataFragment
	// frags are the Fragments the last manifest built converted its
	// messages to (newManifest), in order: a shared message converts to
	// an equal Fragment, which is then copied rather than rebuilt.
	frags []*Fragment
	// fields are the schema field messages of the last manifest decoded,
	// by the bytes of their encodings, one after the other: the schema
	// of consecutive versions is most often byte for byte the same, and
	// its messages cost more to unmarshal than the rest of a manifest
	// besides the fragments.
	fieldsRaw []byte
	fields    []*tablepb.Field
	// schema is the Schema last built, from the messages schemaFields
	// and the metadata schemaMeta: a manifest with the same ones shares
	// it (Schemas are never edited once built).
	schemaFields []*tablepb.Field
	schemaMeta   map[string][]byte
	schema       *format.Schema
}

// positionalMisses is how many fragments may differ from the last
// manifest's at their position before the rest are looked up by encoding
// (or by message) in a map: a commit's own changes are a few.
const positionalMisses = 8

// fragments returns the Fragments last built from the messages ps, nil
// where there is none. A nil memo has none. They are the Fragments
// themselves, shared with the manifests that already hold them: a
// Fragment is never edited once built, and sharing it (rather than a copy
// per manifest) keeps a version's decoding, and the live heap the
// collector scans, from growing with every fragment the table holds.
func (fm *fragmentMemo) fragments(ps []*tablepb.DataFragment) []*Fragment {
	if fm == nil {
		return nil
	}
	fm.mu.Lock()
	prev := fm.frags
	fm.mu.Unlock()
	if len(prev) == 0 {
		return nil
	}
	out := make([]*Fragment, len(ps))
	var byPB map[*tablepb.DataFragment]*Fragment // built after many misses
	misses := 0
	for i, p := range ps {
		if i < len(prev) && prev[i].pb == p {
			out[i] = prev[i]
			continue
		}
		if misses++; misses > positionalMisses {
			if byPB == nil {
				byPB = make(map[*tablepb.DataFragment]*Fragment, len(prev))
				for _, f := range prev {
					byPB[f.pb] = f
				}
			}
			out[i] = byPB[p]
		}
	}
	return out
}

// keep remembers the Fragments of the manifest just built, in place of
// the last one's. frags is not modified after (a Manifest's Fragments
// never are).
func (fm *fragmentMemo) keep(frags []*Fragment) {
	if fm == nil {
		return
	}
	fm.mu.Lock()
	fm.frags = frags
	fm.mu.Unlock()
}

// decode unmarshals a Manifest protobuf and returns the encodings of its
// fragments, in order (fragmentBytes). The result equals proto.Unmarshal's:
// the fields other than the fragments are unmarshaled together, in their
// order, and the fragments are each an embedded message, decoded alone or
// taken from the memo.
func (fm *fragmentMemo) decode(section []byte, pb *tablepb.Manifest) ([][]byte, error) {
	fm.mu.Lock()
	prevRaws, prevPBs, memoFieldsRaw, memoFields := fm.raws, fm.pbs, fm.fieldsRaw, fm.fields
	fm.mu.Unlock()
	var (
		rest      []byte
		raws      = make([][]byte, 0, len(prevRaws)+4)
		fieldsRaw []byte // the schema fields' encodings, one after the other
	)
	for b := section; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, proto.Unmarshal(section, pb) // reports the error
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, proto.Unmarshal(section, pb)
		}
		if num == manifestFragmentsField && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b[n:])
			raws = append(raws, v)
		} else {
			if num == manifestFieldsField && typ == protowire.BytesType {
				fieldsRaw = append(fieldsRaw, b[:n+m]...)
			}
			rest = append(rest, b[:n+m]...)
		}
		b = b[n+m:]
	}
	if len(prevRaws) == 0 {
		// Nothing to reuse (the first decode): one unmarshal.
		if err := proto.Unmarshal(section, pb); err != nil {
			return nil, err
		}
	} else {
		sameFields := len(fieldsRaw) > 0 && bytes.Equal(fieldsRaw, memoFieldsRaw)
		if sameFields {
			// Unmarshaled without them, in place of the memo's.
			if r, ok := withoutField(rest, manifestFieldsField); ok {
				rest = r
			} else {
				sameFields = false
			}
		}
		if err := proto.Unmarshal(rest, pb); err != nil {
			return nil, err
		}
		if sameFields {
			pb.Fields = memoFields[:len(memoFields):len(memoFields)]
		}
		var err error
		if pb.Fragments, err = memoFragments(raws, prevRaws, prevPBs); err != nil {
			return nil, err
		}
	}
	if len(pb.Fragments) != len(raws) {
		raws = nil // not what the message holds: remember nothing
	}
	pbs := slices.Clone(pb.Fragments)
	fm.mu.Lock()
	fm.raws, fm.pbs = raws, pbs
	fm.fieldsRaw, fm.fields = fieldsRaw, pb.Fields
	fm.mu.Unlock()
	return raws, nil
}

// memoFragments returns the messages of the fragment encodings raws:
// the last manifest's (prevRaws, prevPBs) where the encodings are the
// same, by position first, else unmarshaled.
func memoFragments(raws, prevRaws [][]byte, prevPBs []*tablepb.DataFragment) ([]*tablepb.DataFragment, error) {
	out := make([]*tablepb.DataFragment, len(raws))
	var missed []int
	for i, r := range raws {
		if i < len(prevRaws) && bytes.Equal(r, prevRaws[i]) {
			out[i] = prevPBs[i]
			continue
		}
		missed = append(missed, i)
	}
	var byRaw map[string]*tablepb.DataFragment
	if len(missed) > positionalMisses {
		byRaw = make(map[string]*tablepb.DataFragment, len(prevRaws))
		for i, r := range prevRaws {
			byRaw[string(r)] = prevPBs[i]
		}
	}
	for _, i := range missed {
		if p := byRaw[string(raws[i])]; p != nil {
			out[i] = p
			continue
		}
		p := &tablepb.DataFragment{}
		if err := proto.Unmarshal(raws[i], p); err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

// schemaFor returns the Schema last built from the field messages fields
// (the same messages, in the same order) and metadata equal to meta, or
// nil. A nil memo has none.
func (fm *fragmentMemo) schemaFor(fields []*tablepb.Field, meta map[string][]byte) *format.Schema {
	if fm == nil || len(fields) == 0 {
		return nil
	}
	fm.mu.Lock()
	defer fm.mu.Unlock()
	if fm.schema == nil || len(fields) != len(fm.schemaFields) || &fields[0] != &fm.schemaFields[0] {
		return nil
	}
	if !maps.EqualFunc(meta, fm.schemaMeta, bytes.Equal) {
		return nil
	}
	return fm.schema
}

// keepSchema remembers the Schema built from fields and meta.
func (fm *fragmentMemo) keepSchema(fields []*tablepb.Field, meta map[string][]byte, s *format.Schema) {
	if fm == nil {
		return
	}
	fm.mu.Lock()
	fm.schemaFields, fm.schemaMeta, fm.schema = fields, meta, s
	fm.mu.Unlock()
}

// marshalManifest encodes m as proto.Marshal does, except that each
// fragment shared with base (the same message) is copied as the bytes it
// was read from rather than encoded again: most of a manifest, and of a
// small commit's encoding time. The copy is also exact, so the fragment's
// next reader finds it byte-equal (Changes, the memo).
func marshalManifest(m *tablepb.Manifest, base []*Fragment) ([]byte, error) {
	return marshalManifestWith(m, base, proto.MarshalOptions{})
}

// marshalManifestWith is marshalManifest with the options of proto's
// marshaling (deterministic, for an encoding built twice to be compared).
func marshalManifestWith(m *tablepb.Manifest, base []*Fragment, opts proto.MarshalOptions) ([]byte, error) {
	raws := make([][]byte, len(m.Fragments))
	var byPB map[*tablepb.DataFragment][]byte // built on the first miss
	reused, size := 0, 0
	for i, f := range m.Fragments {
		var raw []byte
		if i < len(base) && base[i].pb == f {
			raw = base[i].raw
		} else if len(base) > 0 {
			if byPB == nil {
				byPB = make(map[*tablepb.DataFragment][]byte, len(base))
				for _, b := range base {
					byPB[b.pb] = b.raw
				}
			}
			raw = byPB[f]
		}
		if raw != nil {
			reused++
			raws[i] = raw
			size += len(raw) + 8
		}
	}
	if reused == 0 {
		return opts.Marshal(m)
	}
	frags := m.Fragments
	m.Fragments = nil
	rest, err := opts.Marshal(m)
	m.Fragments = frags
	if err != nil {
		return nil, err
	}
	// proto.Marshal writes the fields in field-number order: the schema
	// (1), then the fragments (2), then the rest.
	split := 0
	for split < len(rest) {
		num, typ, n := protowire.ConsumeTag(rest[split:])
		if n < 0 || num != manifestFieldsField {
			break
		}
		v := protowire.ConsumeFieldValue(num, typ, rest[split+n:])
		if v < 0 {
			break
		}
		split += n + v
	}
	out := make([]byte, 0, len(rest)+size)
	out = append(out, rest[:split]...)
	for i, f := range frags {
		raw := raws[i]
		if raw == nil {
			if raw, err = opts.Marshal(f); err != nil {
				return nil, err
			}
		}
		out = protowire.AppendTag(out, manifestFragmentsField, protowire.BytesType)
		out = protowire.AppendBytes(out, raw)
	}
	return append(out, rest[split:]...), nil
}

// manifestFieldsField is the field number of Manifest.fields.
const manifestFieldsField = 1
