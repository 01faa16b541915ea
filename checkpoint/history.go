package checkpoint

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// RefreshRecord is one refresh of a view, successful or not.
type RefreshRecord struct {
	// Seq numbers a view's records from 1 upward; AppendHistory sets it.
	Seq uint64 `json:"seq"`
	// View is the view's name.
	View string `json:"view"`
	// Mode is "rebuild", "incremental" or "no_op" (empty if the refresh
	// failed before choosing).
	Mode string `json:"mode,omitempty"`
	// RowsWritten is the number of rows written into the view.
	RowsWritten uint64 `json:"rows_written"`
	// SourceFrom and SourceVersion are the watermark before and after;
	// ViewVersion the view's version after.
	SourceFrom    uint64 `json:"source_from"`
	SourceVersion uint64 `json:"source_version"`
	ViewVersion   uint64 `json:"view_version"`
	// StartedAt and FinishedAt bound the refresh; Duration is their
	// difference unless set otherwise.
	StartedAt  time.Time     `json:"started_at"`
	FinishedAt time.Time     `json:"finished_at"`
	Duration   time.Duration `json:"duration_ns"`
	// LagMS is the time from the source commit to the view commit.
	LagMS float64 `json:"lag_ms"`
	// Error is the failure, empty on success.
	Error string `json:"error,omitempty"`
}

// AppendHistory adds a record to its view's history, numbering it, and
// deletes the oldest records beyond the retention count, in one synced
// transaction. It returns the record's Seq.
func (s *Store) AppendHistory(ctx context.Context, r RefreshRecord) (uint64, error) {
	if r.View == "" {
		return 0, errEmptyView
	}
	var seq uint64
	err := s.update(ctx, func(txn *badger.Txn) (err error) {
		seq, err = s.appendHistory(txn, r)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("checkpoint: append history of view %s: %w", r.View, err)
	}
	return seq, nil
}

// appendHistory writes r as the view's next record and trims the oldest
// beyond retention, inside txn.
func (s *Store) appendHistory(txn *badger.Txn, r RefreshRecord) (uint64, error) {
	if r.Duration == 0 && !r.StartedAt.IsZero() && !r.FinishedAt.IsZero() {
		r.Duration = r.FinishedAt.Sub(r.StartedAt)
	}
	r.StartedAt, r.FinishedAt = r.StartedAt.UTC(), r.FinishedAt.UTC()
	next, oldest, err := histBounds(txn, r.View)
	if err != nil {
		return 0, err
	}
	r.Seq = next
	val, err := json.Marshal(&r)
	if err != nil {
		return 0, err
	}
	if err := txn.Set(historyKey(r.View, r.Seq), val); err != nil {
		return 0, err
	}
	next++
	for next-oldest > uint64(s.retention) {
		if err := txn.Delete(historyKey(r.View, oldest)); err != nil {
			return 0, err
		}
		oldest++
	}
	meta := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, next), oldest)
	return r.Seq, txn.Set(histMetaKey(r.View), meta)
}

// histBounds returns the next sequence number to use and the oldest one
// kept (next == oldest: empty).
func histBounds(txn *badger.Txn, view string) (next, oldest uint64, err error) {
	item, err := txn.Get(histMetaKey(view))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 1, 1, nil
	}
	if err != nil {
		return 0, 0, err
	}
	err = item.Value(func(v []byte) error {
		if len(v) != 16 {
			return fmt.Errorf("history bounds of %q are %d bytes, want 16", view, len(v))
		}
		next, oldest = binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:])
		return nil
	})
	return next, oldest, err
}

// History returns up to limit of the view's records, newest first (limit
// <= 0: all that are kept).
func (s *Store) History(ctx context.Context, view string, limit int) ([]RefreshRecord, error) {
	var out []RefreshRecord
	prefix := viewPrefix(tagHistory, view)
	err := s.view(ctx, func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Reverse: true, PrefetchValues: true, PrefetchSize: 64, Prefix: prefix})
		defer it.Close()
		// Reverse iteration starts at the last key <= the seek key: just
		// past every sequence number.
		seek := binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), ^uint64(0))
		for it.Seek(seek); it.Valid(); it.Next() {
			if limit > 0 && len(out) >= limit {
				break
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			var r RefreshRecord
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &r) }); err != nil {
				return fmt.Errorf("decode record: %w", err)
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: history of view %s: %w", view, err)
	}
	return out, nil
}
