package checkpoint

import (
	"context"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// DeleteView removes everything stored for a view: its kept source state,
// history and blobs (for a dropped view). A view with nothing stored is
// not an error. A state of the view written meanwhile is undone once
// written (see forgetState).
func (s *Store) DeleteView(ctx context.Context, view string) error {
	if view == "" {
		return errEmptyView
	}
	prefixes := [][]byte{viewPrefix(tagHistory, view), viewPrefix(tagBlob, view), viewPrefix(tagChunk, view)}
	// Before the delete: a state of the view being written now is undone
	// once written (and one handed over is not written).
	s.forgetState(view)
	err := s.update(ctx, func(txn *badger.Txn) error {
		// A progress record older builds wrote.
		if err := txn.Delete(progressKey(view)); err != nil {
			return err
		}
		if err := txn.Delete(sourceStateKey(view)); err != nil {
			return err
		}
		if err := txn.Delete(stateIndexKey(view)); err != nil {
			return err
		}
		return txn.Delete(histMetaKey(view))
	})
	// Keys go in bounded transactions so a long history never exceeds
	// Badger's transaction size.
	for _, prefix := range prefixes {
		for err == nil {
			var n int
			err = s.update(ctx, func(txn *badger.Txn) error {
				n = 0
				it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
				defer it.Close()
				var keys [][]byte
				for it.Rewind(); it.Valid() && len(keys) < 500; it.Next() {
					keys = append(keys, it.Item().KeyCopy(nil))
				}
				for _, k := range keys {
					if err := txn.Delete(k); err != nil {
						return err
					}
				}
				n = len(keys)
				return nil
			})
			if n == 0 {
				break
			}
		}
	}
	// Again after the sweeps: a state write that began before them (and
	// may have listed or written chunks they deleted) is undone.
	s.forgetState(view)
	if err != nil {
		return fmt.Errorf("checkpoint: delete view %s: %w", view, err)
	}
	return nil
}
