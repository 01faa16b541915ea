package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// MaxSourceStateSize bounds one view's kept source state: a source whose
// state at the watermark encodes larger is not kept (its views rebuild if
// that version is cleaned up before their next refresh).
const MaxSourceStateSize = 16 << 20

// The kept source states: per view, the state of the view's source at
// its watermark (what a change set from the watermark needs of it), so a
// refresh can stay incremental after the source's owner cleaned that
// version up. matview hands a state over after each successful refresh
// (KeepSourceState); it is encoded and written later, by the store's
// state writer, batched and paced (at most one write a second, see
// Options.SourceStateGap): never on the refresh's path. Only the latest
// state of a view is kept, and only one waits per view. A state is stored
// in content-defined chunks (chunk.go) under an index: a write stores the
// chunks the store lacks, then the index, then deletes the chunks no
// longer listed.

// stateWriter takes the states handed over and writes them.
type stateWriter struct {
	// writing serializes writes, so a state handed over later is never
	// overwritten by an earlier one still being written.
	writing sync.Mutex
	mu      sync.Mutex
	pending map[string]pendingState
	written map[string]stateKey // what the store holds per view, as written here
	// failed is the state per view whose encoding failed or was too
	// large: not tried again for that version.
	failed map[string]stateKey
	// forgotten counts, per view, the deletions of its kept state
	// (forgetState): a write that took a view's state before a deletion
	// and lands after it is undone (the view was dropped meanwhile).
	forgotten map[string]uint64
	// damaged names the views whose state read back damaged: their next
	// write writes every chunk again, not only those the store lacks.
	damaged map[string]bool
	wake    chan struct{}
	running bool
	// gap and after pace the writes (Options.SourceStateGap, stateAfter).
	gap   time.Duration
	after func(time.Duration) <-chan time.Time
}

// The pacing of the state writes: at least the configured gap, at least
// stateWriteShare times the last write's duration, and at least as long
// as writing its bytes at stateWriteRate takes; at most maxStateGap.
//
// The rate bounds what Badger does after the write returns: each byte
// written goes through the write-ahead log, the memtable, its flush into
// a table and the compactions after, about 30 ms of CPU per MiB in a
// 5,000-commit run (two views over a source of 5,000 fragments, ~0.6 MiB
// each, written whole every second: a tenth of the daemon's CPU, on the
// cores its refreshes need). The bytes counted are those written: a
// state's first write is paced by its size, the next ones, which write
// only the chunks a commit changed, come about every gap.
const (
	defaultStateGap = time.Second
	stateWriteShare = 10
	stateWriteRate  = 256 << 10 // bytes per second
	maxStateGap     = 10 * time.Second
)

// pause is how long the writer waits after a write of size bytes that
// took took.
func (w *stateWriter) pause(took time.Duration, size int) time.Duration {
	if w.gap < 0 {
		return 0
	}
	byRate := time.Duration(float64(size) / stateWriteRate * float64(time.Second))
	return min(max(w.gap, stateWriteShare*took, byRate), maxStateGap)
}

// stateKey names a source version: its number and commit time.
type stateKey struct {
	version  uint64
	commitTS int64
}

type pendingState struct {
	key    stateKey
	encode func() ([]byte, error)
}

func newStateWriter(gap time.Duration, after func(time.Duration) <-chan time.Time) *stateWriter {
	if gap == 0 {
		gap = defaultStateGap
	}
	if after == nil {
		after = time.After
	}
	return &stateWriter{pending: map[string]pendingState{}, written: map[string]stateKey{}, failed: map[string]stateKey{}, forgotten: map[string]uint64{}, damaged: map[string]bool{}, wake: make(chan struct{}, 1), gap: gap, after: after}
}

// KeepSourceState hands over the state of view's source at version
// (committed at commitTS ns), to be kept in place of the view's previous
// one. It never blocks: encode is called later on the store's writer
// goroutine, and a state handed over again before it ran replaces it. A
// state the store already holds is not written again. If encode fails or
// makes more than MaxSourceStateSize bytes, the view's kept state is
// removed (it would be for an older version), and that version's state is
// not tried again. Read-only and closed stores ignore it.
func (s *Store) KeepSourceState(view string, version uint64, commitTS int64, encode func() ([]byte, error)) {
	w := s.states
	if view == "" || w == nil {
		return
	}
	k := stateKey{version, commitTS}
	w.mu.Lock()
	if !w.running || w.written[view] == k || w.failed[view] == k {
		w.mu.Unlock()
		return
	}
	w.pending[view] = pendingState{key: k, encode: encode}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default: // a write is already due
	}
}

// LoadSourceState returns the view's kept source state, or ErrNotFound.
// A state whose chunks are missing or damaged fails (never other bytes).
// A whole state (kept so by an older build) is read first: a write of
// this build deletes it before it sets the chunk index, so when both are
// there an older build wrote it since.
func (s *Store) LoadSourceState(ctx context.Context, view string) ([]byte, error) {
	var out []byte
	err := s.view(ctx, func(txn *badger.Txn) error {
		item, err := txn.Get(sourceStateKey(view))
		if err == nil {
			out, err = item.ValueCopy(nil)
			return err
		}
		if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		if item, err = txn.Get(stateIndexKey(view)); errors.Is(err, badger.ErrKeyNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		raw, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		x, err := decodeIndex(raw)
		if err != nil {
			return err
		}
		out, err = assemble(x, func(id chunkID) ([]byte, error) {
			it, err := txn.Get(chunkKey(view, id))
			if err != nil {
				return nil, err
			}
			return it.ValueCopy(nil)
		})
		if err != nil {
			s.noteDamaged(view)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: source state of view %s: %w", view, err)
	}
	return out, nil
}

// runStates writes the states handed over until ctx is done, then those
// still waiting. After each write it pauses (stateWriter.pause): a state
// is written within about a second of its refresh, not after every one.
// Open starts it; Close stops it.
func (s *Store) runStates(ctx context.Context) {
	defer s.wg.Done()
	w := s.states
	for {
		select {
		case <-w.wake:
			start := time.Now()
			size, ok := s.writeStates()
			if !ok {
				continue
			}
			if d := w.pause(time.Since(start), size); d > 0 {
				select {
				case <-w.after(d):
				case <-ctx.Done():
				}
			}
		case <-ctx.Done():
			w.mu.Lock()
			w.running = false
			w.mu.Unlock()
			s.writeStates()
			return
		}
	}
}

// FlushSourceStates writes the source states handed over so far and
// returns once they are written (as Close does for the last ones).
func (s *Store) FlushSourceStates() {
	if s.states != nil {
		s.writeStates()
	}
}

// writeStates encodes the waiting states and writes them (writeChunked);
// it reports whether there were any, and the bytes written.
func (s *Store) writeStates() (int, bool) {
	w := s.states
	w.writing.Lock()
	defer w.writing.Unlock()
	w.mu.Lock()
	batch := w.pending
	w.pending = map[string]pendingState{}
	views := make([]string, 0, len(batch))
	gens := make([]uint64, 0, len(batch))
	for v := range batch {
		views = append(views, v)
	}
	sort.Strings(views)
	for _, v := range views {
		gens = append(gens, w.forgotten[v])
	}
	w.mu.Unlock()
	if len(batch) == 0 {
		return 0, false
	}
	vals := make([][]byte, len(views))
	for i, v := range views {
		b, err := batch[v].encode()
		switch {
		case err != nil:
			s.log.Warn("source state not kept (a refresh after its version is cleaned up will rebuild)", "view", v, "version", batch[v].key.version, "err", err)
		case len(b) > MaxSourceStateSize:
			s.log.Warn("source state not kept: too large (a refresh after its version is cleaned up will rebuild)", "view", v, "version", batch[v].key.version, "bytes", len(b), "max", MaxSourceStateSize)
		default:
			vals[i] = b
		}
	}
	written, err := s.writeChunked(views, vals)
	w.mu.Lock()
	var undo []string
	for i, v := range views {
		delete(w.written, v)
		delete(w.failed, v)
		if w.forgotten[v] != gens[i] {
			undo = append(undo, v) // deleted while this write was under way
			continue
		}
		switch {
		case err == nil && vals[i] != nil:
			w.written[v] = batch[v].key
		case vals[i] == nil:
			w.failed[v] = batch[v].key
		}
	}
	w.mu.Unlock()
	if err != nil {
		s.log.Warn("write source states", "views", len(views), "err", err)
	}
	s.undoStates(undo)
	return written, true
}

// undoStates deletes the states just written of views whose kept state
// was deleted (DeleteView) while they were being written: the write's own
// deletion path, with no state for any of them.
func (s *Store) undoStates(views []string) {
	if len(views) == 0 {
		return
	}
	plans, err := s.planStates(views, make([][]byte, len(views)))
	if err == nil {
		_, err = s.writeIndexes(plans)
	}
	if err != nil {
		s.log.Warn("delete the source states of deleted views", "views", len(views), "err", err)
	}
}

// batchWrite runs fn on a write batch (split into transactions as their
// size needs, each synced) under the shared lock, and flushes it.
func (s *Store) batchWrite(fn func(wb *badger.WriteBatch) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	if err := fn(wb); err != nil {
		return err
	}
	if s.batchFault != nil {
		if err := s.batchFault(); err != nil {
			return err
		}
	}
	return wb.Flush()
}

// forgetState drops what the writer remembers of view (its kept state
// was deleted).
func (s *Store) forgetState(view string) {
	if w := s.states; w != nil {
		w.mu.Lock()
		delete(w.written, view)
		delete(w.failed, view)
		delete(w.pending, view)
		delete(w.damaged, view)
		w.forgotten[view]++
		w.mu.Unlock()
	}
}
