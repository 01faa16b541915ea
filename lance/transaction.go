package lance

import (
	"context"

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
	raw := m.transaction
	if raw == nil && m.TransactionFile != "" {
		var err error
		if raw, err = vfs.ReadObject(t.objs, t.path(transactionsDir, m.TransactionFile)); err != nil {
			return nil, t.wrap(m.Version, "read transaction "+m.TransactionFile, err)
		}
	}
	if raw == nil {
		return nil, nil
	}
	tx, err := decodeTransaction(raw)
	if err != nil {
		return nil, t.wrap(m.Version, "decode transaction", err)
	}
	return tx, nil
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
