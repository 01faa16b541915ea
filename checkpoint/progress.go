package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Progress is the cached watermark of a view: what the daemon last saw the
// view reflect. It is a cache, never trusted over the view's own metadata
// (mv.source_version and friends in the view's Lance commit): a refresher
// reads the view, and when the two disagree the view wins and the Progress
// is overwritten.
type Progress struct {
	// View is the view's name.
	View string `json:"view"`
	// Incarnation is the source incarnation the view was built from.
	Incarnation string `json:"incarnation"`
	// SourceVersion is the source version the view reflects.
	SourceVersion uint64 `json:"source_version"`
	// ViewVersion is the view's Lance version holding that watermark.
	ViewVersion uint64 `json:"view_version"`
	// UpdatedAt is when this record was written (set by PutProgress if
	// zero).
	UpdatedAt time.Time `json:"updated_at"`
}

// PutProgress stores p, replacing the view's previous progress. It returns
// once the write is synced.
func (s *Store) PutProgress(ctx context.Context, p Progress) error {
	if p.View == "" {
		return errEmptyView
	}
	val, err := encodeProgress(&p)
	if err != nil {
		return err
	}
	if err := s.update(ctx, func(txn *badger.Txn) error { return txn.Set(progressKey(p.View), val) }); err != nil {
		return fmt.Errorf("checkpoint: put progress of view %s: %w", p.View, err)
	}
	return nil
}

// encodeProgress stamps UpdatedAt (now, if unset; UTC) and encodes p.
func encodeProgress(p *Progress) ([]byte, error) {
	if p.UpdatedAt.IsZero() {
		p.UpdatedAt = time.Now()
	}
	p.UpdatedAt = p.UpdatedAt.UTC()
	return json.Marshal(p)
}

// Progress returns the view's cached progress, or ErrNotFound.
func (s *Store) Progress(ctx context.Context, view string) (Progress, error) {
	var p Progress
	err := s.view(ctx, func(txn *badger.Txn) error {
		item, err := txn.Get(progressKey(view))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error { return json.Unmarshal(v, &p) })
	})
	if err != nil {
		return Progress{}, fmt.Errorf("checkpoint: progress of view %s: %w", view, err)
	}
	return p, nil
}

// ListProgress returns every view's progress, ordered by view name.
func (s *Store) ListProgress(ctx context.Context) ([]Progress, error) {
	var out []Progress
	err := s.view(ctx, func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: 64, Prefix: []byte{tagProgress}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			var p Progress
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &p) }); err != nil {
				return fmt.Errorf("decode %q: %w", it.Item().Key(), err)
			}
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: list progress: %w", err)
	}
	return out, nil
}

// DeleteView removes everything stored for a view: progress, kept source
// state, history and blobs (for a dropped view). A view with nothing stored is not an error.
func (s *Store) DeleteView(ctx context.Context, view string) error {
	if view == "" {
		return errEmptyView
	}
	prefixes := [][]byte{viewPrefix(tagHistory, view), viewPrefix(tagBlob, view)}
	err := s.update(ctx, func(txn *badger.Txn) error {
		if err := txn.Delete(progressKey(view)); err != nil {
			return err
		}
		if err := txn.Delete(sourceStateKey(view)); err != nil {
			return err
		}
		return txn.Delete(histMetaKey(view))
	})
	s.forgetState(view)
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
	if err != nil {
		return fmt.Errorf("checkpoint: delete view %s: %w", view, err)
	}
	return nil
}
