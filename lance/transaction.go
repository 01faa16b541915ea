package lance

import (
	"context"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
	"github.com/mvd-project/mvd/vfs"
)

// Transaction is what the commit of a version did.
type Transaction struct {
	// ReadVersion is the version the writer started from.
	ReadVersion uint64
	// UUID identifies the transaction.
	UUID string
	// Operation is the operation as the Lance protocol names it:
	// OpAppend, OpDelete, OpOverwrite, OpUpdate, OpRewrite, ... or
	// OpUnknown for an operation this package does not know.
	Operation Operation

	pb *tablepb.Transaction
}

// Transaction returns the transaction that produced the snapshot's
// version, read from the manifest's inline copy or from _transactions/. It
// returns nil and no error when the version records no transaction.
func (s *Snapshot) Transaction(ctx context.Context) (*Transaction, error) {
	if err := s.ctxErr(ctx, "read transaction"); err != nil {
		return nil, err
	}
	return s.table.transaction(s.Manifest)
}

func (t *Table) transaction(m *Manifest) (*Transaction, error) {
	raw, err := t.transactionBytes(m)
	if err != nil || raw == nil {
		return nil, err
	}
	tx, err := decodeTransaction(raw)
	if err != nil {
		return nil, t.wrap(m.Version, "decode transaction", err)
	}
	return tx, nil
}

// transactionBytes returns the encoded transaction of m: its inline copy,
// or its file in _transactions/; nil when m records none.
func (t *Table) transactionBytes(m *Manifest) ([]byte, error) {
	if m.transaction != nil || m.TransactionFile == "" {
		return m.transaction, nil
	}
	raw, err := vfs.ReadObject(t.objs, t.path(transactionsDir, m.TransactionFile))
	if err != nil {
		return nil, t.wrap(m.Version, "read transaction "+m.TransactionFile, err)
	}
	return raw, nil
}

// Operation returns the operation of the transaction that produced the
// snapshot's version, as Transaction(ctx).Operation, or OpUnknown when
// the version records none. It reads only the transaction's top-level
// fields, not the operation's contents: classifying every version of a
// span this way costs a walk of a few bytes each rather than a decode.
func (s *Snapshot) Operation(ctx context.Context) (Operation, error) {
	if err := s.ctxErr(ctx, "read transaction"); err != nil {
		return "", err
	}
	raw, err := s.table.transactionBytes(s.Manifest)
	if err != nil {
		return "", err
	}
	if raw == nil {
		return OpUnknown, nil
	}
	op, err := operationOf(raw)
	if err != nil {
		return "", s.table.wrap(s.Version, "decode transaction", err)
	}
	return op, nil
}

// operationOf returns the operation a Transaction protobuf holds, with
// proto.Unmarshal's meaning: the last member of the operation oneof on the
// wire wins, and a member encoded with another wire type is an unknown
// field. Only the top-level framing is checked.
func operationOf(raw []byte) (Operation, error) {
	fields := (&tablepb.Transaction{}).ProtoReflect().Descriptor().Fields()
	op := OpUnknown
	for b := raw; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", corruptf("transaction protobuf: %v", protowire.ParseError(n))
		}
		b = b[n:]
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return "", corruptf("transaction protobuf: field %d: %v", num, protowire.ParseError(n))
		}
		b = b[n:]
		if typ != protowire.BytesType {
			continue
		}
		if fd := fields.ByNumber(num); fd != nil && fd.ContainingOneof() != nil && fd.ContainingOneof().Name() == "operation" {
			op = Operation(fd.Name())
		}
	}
	return op, nil
}

func decodeTransaction(raw []byte) (*Transaction, error) {
	pb := &tablepb.Transaction{}
	if err := unmarshal(raw, pb); err != nil {
		return nil, corruptf("transaction protobuf: %v", err)
	}
	tx := &Transaction{ReadVersion: pb.GetReadVersion(), UUID: pb.GetUuid(), Operation: OpUnknown, pb: pb}
	msg := pb.ProtoReflect()
	if fd := msg.WhichOneof(msg.Descriptor().Oneofs().ByName("operation")); fd != nil {
		tx.Operation = Operation(fd.Name())
	}
	return tx, nil
}

// rewrite is the transaction's Rewrite operation (a compaction), nil for
// another operation or a nil transaction.
func (tx *Transaction) rewrite() *tablepb.Transaction_Rewrite {
	if tx == nil {
		return nil
	}
	return tx.pb.GetRewrite()
}
