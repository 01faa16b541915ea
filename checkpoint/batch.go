package checkpoint

import (
	"context"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// Refresh is one refresh to record: its history record and, after a
// success, the view's new progress (nil after a failure).
type Refresh struct {
	Record   RefreshRecord
	Progress *Progress
}

// batchMax bounds the refreshes written in one transaction, far below
// Badger's transaction size limit.
const batchMax = 256

// RecordRefreshes stores refreshes, in order, in as few synced
// transactions as their number allows (one per batchMax): the daemon's
// history writer batches what arrived while the previous write synced,
// so a burst of refreshes costs one fsync, not one each.
func (s *Store) RecordRefreshes(ctx context.Context, rs []Refresh) error {
	for _, r := range rs {
		if r.Record.View == "" {
			return errEmptyView
		}
		if r.Progress != nil && r.Progress.View != r.Record.View {
			return fmt.Errorf("checkpoint: progress of view %s with a record of view %s", r.Progress.View, r.Record.View)
		}
	}
	for len(rs) > 0 {
		n := min(len(rs), batchMax)
		chunk := rs[:n]
		rs = rs[n:]
		vals := make([][]byte, n)
		for i, r := range chunk {
			if r.Progress == nil {
				continue
			}
			p := *r.Progress
			v, err := encodeProgress(&p)
			if err != nil {
				return err
			}
			vals[i] = v
		}
		err := s.update(ctx, func(txn *badger.Txn) error {
			for i, r := range chunk {
				if vals[i] != nil {
					if err := txn.Set(progressKey(r.Record.View), vals[i]); err != nil {
						return err
					}
				}
				if _, err := s.appendHistory(txn, r.Record); err != nil {
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
