package lance

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// TestOperationOf: the operation read from the top-level fields equals the
// full decode's, including when two members of the oneof are on the wire
// (the last wins) and when a member has another wire type (unknown).
func TestOperationOf(t *testing.T) {
	enc := func(m *tablepb.Transaction) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	appendTx := enc(&tablepb.Transaction{ReadVersion: 3, Uuid: "u", Operation: &tablepb.Transaction_Append_{Append: &tablepb.Transaction_Append{}}})
	deleteTx := enc(&tablepb.Transaction{ReadVersion: 4, Operation: &tablepb.Transaction_Delete_{Delete: &tablepb.Transaction_Delete{DeletedFragmentIds: []uint64{1}}}})
	configTx := enc(&tablepb.Transaction{Operation: &tablepb.Transaction_UpdateConfig_{UpdateConfig: &tablepb.Transaction_UpdateConfig{}}})
	none := enc(&tablepb.Transaction{ReadVersion: 5, Uuid: "x"})
	both := append(append([]byte(nil), appendTx...), deleteTx...)
	// The delete's field number with a varint: an unknown field, not an
	// operation.
	var delNum protowire.Number
	fields := (&tablepb.Transaction{}).ProtoReflect().Descriptor().Fields()
	for i := range fields.Len() {
		if fields.Get(i).Name() == "delete" {
			delNum = fields.Get(i).Number()
		}
	}
	if delNum == 0 {
		t.Fatal("no delete member in Transaction")
	}
	wrongType := protowire.AppendVarint(protowire.AppendTag(append([]byte(nil), appendTx...), delNum, protowire.VarintType), 1)
	cases := []struct {
		name string
		raw  []byte
		want Operation
	}{
		{"append", appendTx, OpAppend},
		{"delete", deleteTx, OpDelete},
		{"update config", configTx, OpUpdateConfig},
		{"no operation", none, OpUnknown},
		{"two members", both, OpDelete},
		{"member of another wire type", wrongType, OpAppend},
	}
	for _, c := range cases {
		got, err := operationOf(c.raw)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		tx, err := decodeTransaction(c.raw)
		if err != nil {
			t.Fatalf("%s: decodeTransaction: %v", c.name, err)
		}
		if got != c.want || got != tx.Operation {
			t.Errorf("%s: operationOf %q, decodeTransaction %q, want %q", c.name, got, tx.Operation, c.want)
		}
	}
	if _, err := operationOf([]byte{0x0a, 0x05, 'a'}); err == nil {
		t.Error("a truncated transaction parsed")
	}
}
