package lance

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// TestFragmentMemoDecode checks that decoding through the memo gives what
// one proto.Unmarshal gives, across a history of versions sharing most of
// their fragments, with fields in any order, and that a memo hit is a
// shared message (the point of the memo).
func TestFragmentMemoDecode(t *testing.T) {
	frag := func(id, rows, deleted uint64) *tablepb.DataFragment {
		f := &tablepb.DataFragment{Id: id, PhysicalRows: rows, Files: []*tablepb.DataFile{{Path: "f.lance", Fields: []int32{0, 1}}}}
		if deleted > 0 {
			f.DeletionFile = &tablepb.DeletionFile{Id: deleted, NumDeletedRows: deleted, ReadVersion: 3}
		}
		return f
	}
	marshal := func(m proto.Message) []byte {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	base := &tablepb.Manifest{Version: 1, SchemaMetadata: map[string][]byte{"k": []byte("v")}}
	for i := range uint64(8) {
		base.Fragments = append(base.Fragments, frag(i, 100, 0))
	}
	step := func(v uint64, edit func(m *tablepb.Manifest)) *tablepb.Manifest {
		m := proto.Clone(base).(*tablepb.Manifest)
		m.Version = v
		edit(m)
		base = m
		return m
	}
	// Reordered: the fragments after the other fields, one field repeated
	// after them (the last value of a scalar wins in both decodings).
	reordered := func(m *tablepb.Manifest) []byte {
		frags := m.Fragments
		m2 := proto.Clone(m).(*tablepb.Manifest)
		m2.Fragments = nil
		out := marshal(m2)
		for _, f := range frags {
			out = protowire.AppendTag(out, manifestFragmentsField, protowire.BytesType)
			out = protowire.AppendBytes(out, marshal(f))
		}
		out = protowire.AppendTag(out, 3, protowire.VarintType)
		return protowire.AppendVarint(out, m.Version+100)
	}
	var memo fragmentMemo
	cases := []struct {
		name    string
		section []byte
	}{
		{"first", marshal(base)},
		{"same fragments", marshal(step(2, func(m *tablepb.Manifest) {}))},
		{"one deletion", marshal(step(3, func(m *tablepb.Manifest) { m.Fragments[3] = frag(3, 100, 1) }))},
		{"appended", marshal(step(4, func(m *tablepb.Manifest) { m.Fragments = append(m.Fragments, frag(8, 5, 0)) }))},
		{"removed", marshal(step(5, func(m *tablepb.Manifest) { m.Fragments = m.Fragments[1:] }))},
		{"reordered fields", reordered(step(6, func(m *tablepb.Manifest) { m.Fragments[0] = frag(1, 100, 2) }))},
		{"all new", marshal(step(7, func(m *tablepb.Manifest) {
			for i := range m.Fragments {
				m.Fragments[i] = frag(uint64(20+i), 7, 0)
			}
		}))},
		{"empty", marshal(step(8, func(m *tablepb.Manifest) { m.Fragments = nil }))},
	}
	var prev *tablepb.Manifest
	for _, c := range cases {
		want := &tablepb.Manifest{}
		if err := proto.Unmarshal(c.section, want); err != nil {
			t.Fatal(err)
		}
		got := &tablepb.Manifest{}
		_, err := memo.decode(c.section, got)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !proto.Equal(got, want) {
			t.Fatalf("%s: memo decode\n%v\nwant\n%v", c.name, got, want)
		}
		if c.name == "one deletion" {
			if got.Fragments[0] != prev.Fragments[0] {
				t.Errorf("%s: an unchanged fragment was decoded again, not shared", c.name)
			}
			if got.Fragments[3] == prev.Fragments[3] {
				t.Errorf("%s: the changed fragment is the old message", c.name)
			}
		}
		prev = got
	}
	// A corrupt section fails as proto.Unmarshal fails.
	bad := append(marshal(base), 0x12, 0x7f) // a fragment longer than the rest
	if _, err := memo.decode(bad, &tablepb.Manifest{}); err == nil {
		t.Error("a truncated fragment decoded")
	}
}
