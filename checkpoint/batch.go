package checkpoint

import (
	"context"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// batchMax bounds the refreshes written in one transaction, far below
// Badger's transaction size limit.
const batchMax = 256

// RecordRefreshes stores refresh records, in order, in as few synced
// transactions as their number allows (one per batchMax): the daemon's
// history writer batches what arrived while the previous write synced,
// so a burst of refreshes costs one fsync, not one each.
func (s *Store) RecordRefreshes(ctx context.Context, rs []RefreshRecord) error {
	for _, r := range rs {
		if r.View == "" {
			return errEmptyView
		}
	}
	for len(rs) > 0 {
		n := min(len(rs), batchMax)
		chunk := rs[:n]
		rs = rs[n:]
		err := s.update(ctx, func(txn *badger.Txn) error {
			for _, r := range chunk {
				if _, err := s.appendHistory(txn, r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("checkpoint: record %d refreshes: %w", n, err)
		}
	}
	return nil
}
