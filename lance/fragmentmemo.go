package lance

import (
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

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
// A fragmentMemo is safe for concurrent use.
type fragmentMemo struct {
	mu    sync.Mutex
	byRaw map[string]*tablepb.DataFragment
}

// decode unmarshals a Manifest protobuf and returns the encodings of its
// fragments, in order (fragmentBytes). The result equals proto.Unmarshal's:
// the fields other than the fragments are unmarshaled together, in their
// order, and the fragments are each an embedded message, decoded alone or
// taken from the memo.
func (fm *fragmentMemo) decode(section []byte, pb *tablepb.Manifest) ([][]byte, error) {
	var (
		rest  []byte
		raws  [][]byte
		plain = true
	)
	fm.mu.Lock()
	memo := fm.byRaw
	fm.mu.Unlock()
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
			if _, ok := memo[string(v)]; ok {
				plain = false
			}
		} else {
			rest = append(rest, b[:n+m]...)
		}
		b = b[n+m:]
	}
	next := make(map[string]*tablepb.DataFragment, len(raws))
	if plain {
		// Nothing to reuse (the first decode, or another table's history):
		// one unmarshal, then the memo is filled from its fragments.
		if err := proto.Unmarshal(section, pb); err != nil {
			return nil, err
		}
		if len(pb.Fragments) == len(raws) {
			for i, f := range pb.Fragments {
				next[string(raws[i])] = f
			}
		}
	} else {
		if err := proto.Unmarshal(rest, pb); err != nil {
			return nil, err
		}
		pb.Fragments = make([]*tablepb.DataFragment, len(raws))
		for i, r := range raws {
			f := memo[string(r)]
			if f == nil {
				f = &tablepb.DataFragment{}
				if err := proto.Unmarshal(r, f); err != nil {
					return nil, err
				}
			}
			pb.Fragments[i] = f
			next[string(r)] = f
		}
	}
	fm.mu.Lock()
	fm.byRaw = next
	fm.mu.Unlock()
	return raws, nil
}
