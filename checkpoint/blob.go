package checkpoint

import (
	"context"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// MaxBlobSize bounds one blob. Blobs are meant for caches of a view (a
// provenance index snapshot), not for data.
const MaxBlobSize = 64 << 20

// PutBlob stores value under (view, key), replacing any previous value,
// and returns once it is synced. The value is copied.
func (s *Store) PutBlob(ctx context.Context, view, key string, value []byte) error {
	if view == "" {
		return errEmptyView
	}
	if len(value) > MaxBlobSize {
		return fmt.Errorf("checkpoint: blob %s/%s is %d bytes, more than %d", view, key, len(value), MaxBlobSize)
	}
	v := append([]byte(nil), value...)
	if err := s.update(ctx, func(txn *badger.Txn) error { return txn.Set(blobKey(view, key), v) }); err != nil {
		return fmt.Errorf("checkpoint: put blob %s/%s: %w", view, key, err)
	}
	return nil
}

// Blob returns a copy of the value under (view, key), or ErrNotFound.
func (s *Store) Blob(ctx context.Context, view, key string) ([]byte, error) {
	var out []byte
	err := s.view(ctx, func(txn *badger.Txn) error {
		item, err := txn.Get(blobKey(view, key))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		out, err = item.ValueCopy(nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: blob %s/%s: %w", view, key, err)
	}
	return out, nil
}

// DeleteBlob removes (view, key); a missing blob is not an error.
func (s *Store) DeleteBlob(ctx context.Context, view, key string) error {
	if err := s.update(ctx, func(txn *badger.Txn) error { return txn.Delete(blobKey(view, key)) }); err != nil {
		return fmt.Errorf("checkpoint: delete blob %s/%s: %w", view, key, err)
	}
	return nil
}
