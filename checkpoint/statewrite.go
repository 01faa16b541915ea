package checkpoint

import (
	"context"

	"github.com/dgraph-io/badger/v4"
)

// statePlan is the write of one view's kept state: its chunks, those the
// store holds, and the index to write (nil: the state is deleted).
type statePlan struct {
	view  string
	parts map[chunkID][]byte
	index []byte
	have  map[chunkID]bool
	// rewrite writes the chunks the store holds too: a read found one of
	// them damaged.
	rewrite bool
}

// writeChunked writes the states vals of views (nil: delete the view's
// state) and returns the bytes written. It writes in two steps, each
// synced: first the chunks the store does not hold yet, then the indexes,
// and only after them deletes the chunks no index lists any more. A crash
// between leaves each view's previous state readable; chunks left over
// (written for an index never written, or no longer listed) are deleted by
// the view's next write, which lists what the store holds.
func (s *Store) writeChunked(views []string, vals [][]byte) (int, error) {
	plans, err := s.planStates(views, vals)
	if err != nil {
		return 0, err
	}
	chunks, err := s.writeChunks(plans)
	indexes := 0
	if err == nil {
		indexes, err = s.writeIndexes(plans)
	}
	if err != nil {
		for _, p := range plans {
			if p.rewrite {
				s.noteDamaged(p.view) // still to rewrite
			}
		}
	}
	return chunks + indexes, err
}

// planStates lists what the store holds of each view's state and splits
// the new states into chunks.
func (s *Store) planStates(views []string, vals [][]byte) ([]statePlan, error) {
	plans := make([]statePlan, len(views))
	w := s.states
	for i, v := range views {
		have, err := s.chunksOf(v)
		if err != nil {
			return nil, err
		}
		w.mu.Lock()
		rewrite := w.damaged[v]
		delete(w.damaged, v)
		w.mu.Unlock()
		plans[i] = statePlan{view: v, have: have, rewrite: rewrite}
		if vals[i] != nil {
			var x stateIndex
			x, plans[i].parts = split(vals[i])
			plans[i].index = x.encode()
		}
	}
	return plans, nil
}

// writeChunks writes the chunks of the plans the store lacks (or all of a
// plan's, to rewrite damage) and returns their bytes.
func (s *Store) writeChunks(plans []statePlan) (int, error) {
	written := 0
	err := s.batchWrite(func(wb *badger.WriteBatch) error {
		for _, p := range plans {
			for id, c := range p.parts {
				if p.have[id] && !p.rewrite {
					continue
				}
				if err := wb.Set(chunkKey(p.view, id), c); err != nil {
					return err
				}
				written += len(c)
			}
		}
		return nil
	})
	return written, err
}

// writeIndexes writes the plans' indexes, then deletes what they no
// longer list: chunks, and a whole state an older build kept. It returns
// the index bytes written.
func (s *Store) writeIndexes(plans []statePlan) (int, error) {
	written := 0
	err := s.batchWrite(func(wb *badger.WriteBatch) error {
		// The indexes first: if the batch is split, a chunk's deletion is
		// never committed before the index that stopped listing it. An
		// older build's whole state goes before its index is set, so that
		// both are present only if an older build wrote the whole one
		// since (LoadSourceState then reads that).
		for _, p := range plans {
			if p.index == nil {
				continue
			}
			if err := wb.Delete(sourceStateKey(p.view)); err != nil {
				return err
			}
			if err := wb.Set(stateIndexKey(p.view), p.index); err != nil {
				return err
			}
			written += len(p.index)
		}
		for _, p := range plans {
			if p.index == nil {
				if err := deleteState(wb, p.view, p.have); err != nil {
					return err
				}
				continue
			}
			for id := range p.have {
				if _, kept := p.parts[id]; kept {
					continue
				}
				if err := wb.Delete(chunkKey(p.view, id)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return written, err
}

// noteDamaged makes the view's next state write rewrite every chunk.
func (s *Store) noteDamaged(view string) {
	if w := s.states; w != nil {
		w.mu.Lock()
		w.damaged[view] = true
		w.mu.Unlock()
	}
}

// deleteState deletes a view's kept state: its index, its chunks have and
// a whole state an older build kept.
func deleteState(wb *badger.WriteBatch, view string, have map[chunkID]bool) error {
	if err := wb.Delete(stateIndexKey(view)); err != nil {
		return err
	}
	if err := wb.Delete(sourceStateKey(view)); err != nil {
		return err
	}
	for id := range have {
		if err := wb.Delete(chunkKey(view, id)); err != nil {
			return err
		}
	}
	return nil
}

// chunksOf lists the ids of the chunks the store holds of view's state.
func (s *Store) chunksOf(view string) (map[chunkID]bool, error) {
	have := map[chunkID]bool{}
	prefix := viewPrefix(tagChunk, view)
	err := s.view(context.Background(), func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			if len(k) != len(prefix)+chunkIDSize {
				continue // not a chunk key of this layout
			}
			have[chunkID(k[len(prefix):])] = true
		}
		return nil
	})
	return have, err
}
