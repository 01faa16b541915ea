package lance

import (
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// TestHeaderFields: the version and timestamp headerFields reads equal
// proto.Unmarshal's, with the fields in any order and repeated.
func TestHeaderFields(t *testing.T) {
	ts := time.Date(2026, 12, 1, 19, 0, 0, 123456789, time.UTC)
	m := &tablepb.Manifest{
		Version:        7,
		Timestamp:      timestamppb.New(ts),
		Fragments:      []*tablepb.DataFragment{{Id: 1, PhysicalRows: 3}},
		SchemaMetadata: map[string][]byte{"k": []byte("v")},
	}
	plain, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	// The version repeated (the last wins) and the timestamp split over
	// two occurrences (they merge).
	repeated := protowire.AppendTag(append([]byte(nil), plain...), manifestVersionField, protowire.VarintType)
	repeated = protowire.AppendVarint(repeated, 9)
	repeated = protowire.AppendTag(repeated, manifestTimestampField, protowire.BytesType)
	repeated = protowire.AppendBytes(repeated, protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 5))
	noTS, err := proto.Marshal(&tablepb.Manifest{Version: 3})
	if err != nil {
		t.Fatal(err)
	}
	negFive := int64(-5)
	negNanos := protowire.AppendTag(nil, manifestTimestampField, protowire.BytesType)
	negNanos = protowire.AppendBytes(negNanos, protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), uint64(negFive)))
	// Timestamp fields of another wire type are unknown fields; seconds
	// repeated (the last wins).
	odd := protowire.AppendTag(nil, 1, protowire.Fixed64Type)
	odd = protowire.AppendFixed64(odd, 99)
	odd = protowire.AppendVarint(protowire.AppendTag(odd, 1, protowire.VarintType), 1_700_000_000)
	odd = protowire.AppendVarint(protowire.AppendTag(odd, 1, protowire.VarintType), 1_800_000_000)
	odd = protowire.AppendBytes(protowire.AppendTag(odd, 2, protowire.BytesType), []byte("x"))
	odd = protowire.AppendVarint(protowire.AppendTag(odd, 2, protowire.VarintType), 1<<40+7) // truncated to int32
	oddTS := protowire.AppendBytes(protowire.AppendTag(nil, manifestTimestampField, protowire.BytesType), odd)
	for name, section := range map[string][]byte{"plain": plain, "repeated": repeated, "no timestamp": noTS, "negative nanos": negNanos, "odd timestamp": oddTS} {
		checkHeaderFields(t, name, section)
	}
	if _, _, err := headerFields([]byte{0x1a}); err == nil { // a tag with no value
		t.Error("a truncated section parsed")
	}
}

// checkHeaderFields compares headerFields with proto.Unmarshal on section
// (which need not parse: then headerFields may fail or not, but must not
// disagree when both succeed).
func checkHeaderFields(t *testing.T, name string, section []byte) {
	t.Helper()
	v, ts, err := headerFields(section)
	var pb tablepb.Manifest
	perr := proto.Unmarshal(section, &pb)
	if perr != nil {
		return
	}
	if err != nil {
		t.Errorf("%s: headerFields: %v; proto.Unmarshal parses it", name, err)
		return
	}
	var want time.Time
	if pb.Timestamp != nil {
		want = pb.Timestamp.AsTime()
	}
	if v != pb.GetVersion() || !ts.Equal(want) {
		t.Errorf("%s: headerFields %d %v, proto.Unmarshal %d %v", name, v, ts, pb.GetVersion(), want)
	}
}

func FuzzHeaderFields(f *testing.F) {
	manifestSeeds(f, func(m *Manifest) {
		if section, err := manifestSection(m.raw); err == nil {
			f.Add(section)
		}
	})
	f.Fuzz(func(t *testing.T, section []byte) { checkHeaderFields(t, "fuzz", section) })
}
