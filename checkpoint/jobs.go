package checkpoint

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// JobEntry is one refresh job as the store keeps it: its sequence number
// (the order jobs were submitted in; the daemon assigns it), whether it
// has ended, and its record, which the store does not read (the daemon's
// JSON). Done lets a reader find the jobs that were queued or running
// when their daemon died without decoding every record.
type JobEntry struct {
	Seq   uint64
	Done  bool
	Value []byte
}

// errJobSeq refuses sequence number 0 (the daemon numbers jobs from 1).
var errJobSeq = errors.New("checkpoint: job sequence number 0")

// PutJob writes (or overwrites) a job's entry and deletes the entries of
// drop, in one synced transaction: a job's state transition is durable
// when PutJob returns, and retention trims old jobs in the same write.
func (s *Store) PutJob(ctx context.Context, e JobEntry, drop ...uint64) error {
	if e.Seq == 0 {
		return errJobSeq
	}
	val := make([]byte, 0, 1+len(e.Value))
	if e.Done {
		val = append(val, 1)
	} else {
		val = append(val, 0)
	}
	val = append(val, e.Value...)
	err := s.update(ctx, func(txn *badger.Txn) error {
		if err := txn.Set(jobKey(e.Seq), val); err != nil {
			return err
		}
		for _, seq := range drop {
			if err := txn.Delete(jobKey(seq)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("checkpoint: record job %d: %w", e.Seq, err)
	}
	return nil
}

// Jobs returns every job entry kept, oldest first.
func (s *Store) Jobs(ctx context.Context) ([]JobEntry, error) {
	var out []JobEntry
	err := s.view(ctx, func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: 64, Prefix: []byte{tagJob}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			k := it.Item().Key()
			if len(k) != 9 {
				return fmt.Errorf("job key %q is %d bytes, want 9", k, len(k))
			}
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			if len(v) == 0 {
				return fmt.Errorf("job %d: empty entry", binary.BigEndian.Uint64(k[1:]))
			}
			out = append(out, JobEntry{Seq: binary.BigEndian.Uint64(k[1:]), Done: v[0] == 1, Value: v[1:]})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: read jobs: %w", err)
	}
	return out, nil
}
