package lance

import (
	"bytes"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// TestFragmentMemoDecode checks that decoding through the memo gives what
// one proto.Unmarshal gives, across a history of versions sharing most of
// their fragments and their schema, with fields in any order, and that a
// memo hit is a shared message, and a shared Schema (the point of the
// memo).
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
	base := &tablepb.Manifest{Version: 1, SchemaMetadata: map[string][]byte{"k": []byte("v")}, Fields: []*tablepb.Field{
		{Name: "id", Id: 0, ParentId: -1, LogicalType: "int64"},
		{Name: "name", Id: 1, ParentId: -1, LogicalType: "string", Nullable: true, Metadata: map[string][]byte{"m": []byte("1")}},
	}}
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
		{"new column", marshal(step(61, func(m *tablepb.Manifest) {
			m.Fields = append(m.Fields, &tablepb.Field{Name: "x", Id: 2, ParentId: -1, LogicalType: "double", Nullable: true})
		}))},
		{"same schema", marshal(step(62, func(m *tablepb.Manifest) { m.Fragments[1] = frag(2, 100, 3) }))},
		{"metadata changed", marshal(step(63, func(m *tablepb.Manifest) { m.SchemaMetadata["k"] = []byte("w") }))},
		{"all new", marshal(step(7, func(m *tablepb.Manifest) {
			for i := range m.Fragments {
				m.Fragments[i] = frag(uint64(20+i), 7, 0)
			}
		}))},
		{"empty", marshal(step(8, func(m *tablepb.Manifest) { m.Fragments = nil }))},
	}
	var (
		prev       *tablepb.Manifest
		prevSchema *Schema
	)
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
		// The Fragments built through the memo (the last manifest's own
		// where the message is shared) equal fresh ones, but for the
		// version they name in errors: the first that held them.
		frags, err := memo.decode(c.section, &tablepb.Manifest{}) // as decodeManifestWith does
		if err != nil {
			t.Fatal(err)
		}
		mm, err := newManifest(got, nil, c.section, frags, &memo)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		fresh, err := newManifest(want, nil, c.section, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(mm.Fragments) != len(fresh.Fragments) {
			t.Fatalf("%s: %d fragments through the memo, %d fresh", c.name, len(mm.Fragments), len(fresh.Fragments))
		}
		for i, f := range mm.Fragments {
			g := fresh.Fragments[i]
			if f.ID != g.ID || f.PhysicalRows != g.PhysicalRows || !reflect.DeepEqual(f.Files, g.Files) || !reflect.DeepEqual(f.Deletion, g.Deletion) ||
				!bytes.Equal(f.raw, g.raw) || !proto.Equal(f.pb, g.pb) {
				t.Errorf("%s: fragment %d through the memo %+v, fresh %+v", c.name, i, f, g)
			}
		}
		if c.name == "one deletion" {
			if got.Fragments[0] != prev.Fragments[0] {
				t.Errorf("%s: an unchanged fragment was decoded again, not shared", c.name)
			}
			if got.Fragments[3] == prev.Fragments[3] {
				t.Errorf("%s: the changed fragment is the old message", c.name)
			}
		}
		// The schema: shared while its fields and metadata stay, built
		// anew, and right, when either changes.
		switch c.name {
		case "one deletion", "same schema":
			if got.Fields[0] != prev.Fields[0] || mm.Schema != prevSchema {
				t.Errorf("%s: an unchanged schema was decoded again, not shared", c.name)
			}
		case "new column", "metadata changed":
			if mm.Schema == prevSchema {
				t.Errorf("%s: a changed schema is the old one", c.name)
			}
		}
		if !reflect.DeepEqual(mm.Schema.Metadata, fresh.Schema.Metadata) || len(mm.Schema.Fields) != len(fresh.Schema.Fields) {
			t.Errorf("%s: schema through the memo %+v, fresh %+v", c.name, mm.Schema, fresh.Schema)
		}
		for i, f := range mm.Schema.Fields {
			if g := fresh.Schema.Fields[i]; f.Name != g.Name || f.LogicalType != g.LogicalType || f.Nullable != g.Nullable || !reflect.DeepEqual(f.Metadata, g.Metadata) {
				t.Errorf("%s: field %d through the memo %+v, fresh %+v", c.name, i, f, g)
			}
		}
		prev, prevSchema = got, mm.Schema
	}
	// Fragment ids are unique, in whatever order the fragments come: a
	// repeated one is corruption, through the memo or not.
	for _, c := range []struct {
		ids []uint64
		dup bool
	}{{[]uint64{5, 2, 7}, false}, {[]uint64{5, 2, 5}, true}, {[]uint64{1, 1}, true}, {[]uint64{9}, false}} {
		m := &tablepb.Manifest{Version: 20}
		for _, id := range c.ids {
			m.Fragments = append(m.Fragments, frag(id, 10, 0))
		}
		for _, mm := range []*fragmentMemo{&memo, nil} {
			_, err := newManifest(m, nil, marshal(m), nil, mm)
			if c.dup != (err != nil && strings.Contains(err.Error(), "appears twice")) {
				t.Errorf("fragment ids %v (memo %v): %v", c.ids, mm != nil, err)
			}
		}
	}
	// A corrupt section fails as proto.Unmarshal fails.
	bad := append(marshal(base), 0x12, 0x7f) // a fragment longer than the rest
	if _, err := memo.decode(bad, &tablepb.Manifest{}); err == nil {
		t.Error("a truncated fragment decoded")
	}
}

// TestMarshalManifest: a manifest encoded reusing its base's fragment
// encodings decodes to the message itself, and each shared fragment is
// the base's exact bytes (here in another writer's field order), whether
// it kept its position or not.
func TestMarshalManifest(t *testing.T) {
	frag := func(id uint64) *tablepb.DataFragment {
		return &tablepb.DataFragment{Id: id, PhysicalRows: 10 + id, Files: []*tablepb.DataFile{{Path: "d" + strconv.FormatUint(id, 10) + ".lance", Fields: []int32{0, 1}}}}
	}
	// The base's section: fragment 2 with its fields reversed.
	basePB := &tablepb.Manifest{Version: 4, Fields: []*tablepb.Field{{Name: "id", Id: 0, ParentId: -1, LogicalType: "int64"}}, SchemaMetadata: map[string][]byte{"k": []byte("v")}}
	for i := range uint64(5) {
		basePB.Fragments = append(basePB.Fragments, frag(i))
	}
	section, err := proto.Marshal(&tablepb.Manifest{Version: 4, Fields: basePB.Fields, SchemaMetadata: basePB.SchemaMetadata})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range basePB.Fragments {
		raw, err := proto.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if i == 2 { // the fields in reverse order: what another encoder may do
			raw = nil
			for _, part := range []*tablepb.DataFragment{{PhysicalRows: f.PhysicalRows}, {Files: f.Files}, {Id: f.Id}} {
				b, err := proto.Marshal(part)
				if err != nil {
					t.Fatal(err)
				}
				raw = append(raw, b...)
			}
		}
		section = protowire.AppendTag(section, manifestFragmentsField, protowire.BytesType)
		section = protowire.AppendBytes(section, raw)
	}
	var memo fragmentMemo
	pb := &tablepb.Manifest{}
	frags, err := memo.decode(section, pb)
	if err != nil {
		t.Fatal(err)
	}
	base, err := newManifest(pb, nil, section, frags, &memo)
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(m *tablepb.Manifest){
		"same":              func(m *tablepb.Manifest) {},
		"one replaced":      func(m *tablepb.Manifest) { m.Fragments[3] = frag(9) },
		"first removed":     func(m *tablepb.Manifest) { m.Fragments = m.Fragments[1:] },
		"appended":          func(m *tablepb.Manifest) { m.Fragments = append(m.Fragments, frag(7)) },
		"none shared":       func(m *tablepb.Manifest) { m.Fragments = []*tablepb.DataFragment{frag(8)} },
		"fragments dropped": func(m *tablepb.Manifest) { m.Fragments = nil },
	} {
		m := shallowManifest(base.pb)
		m.Version = 5
		m.SchemaMetadata["k"] = []byte("w")
		edit(m)
		out, err := marshalManifest(m, base.Fragments)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := &tablepb.Manifest{}
		if err := proto.Unmarshal(out, got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !proto.Equal(got, m) {
			t.Fatalf("%s: decodes to\n%v\nwant\n%v", name, got, m)
		}
		raws := fragmentBytes(out)
		for i, f := range m.Fragments {
			for _, bf := range base.Fragments {
				if bf.pb == f && !bytes.Equal(raws[i], bf.raw) {
					t.Errorf("%s: shared fragment %d re-encoded", name, f.GetId())
				}
			}
		}
	}
}
