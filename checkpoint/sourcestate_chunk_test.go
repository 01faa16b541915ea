package checkpoint

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// handOver puts state b of view at version in the writer's queue without
// waking the writer goroutine, so that the caller's writeStates writes
// it (KeepSourceState would race the goroutine for it).
func handOver(s *Store, view string, version uint64, b []byte) {
	w := s.states
	w.mu.Lock()
	w.pending[view] = pendingState{key: stateKey{version, int64(version) * 10}, encode: func() ([]byte, error) { return b, nil }}
	w.mu.Unlock()
}

// keepAndFlush hands over state b of view at version and writes it,
// returning the bytes the write wrote.
func keepAndFlush(t testing.TB, s *Store, view string, version uint64, b []byte) int {
	t.Helper()
	handOver(s, view, version, b)
	n, ok := s.writeStates()
	if !ok {
		t.Fatalf("state of %s at %d: nothing written", view, version)
	}
	return n
}

func expectState(t *testing.T, s *Store, view string, want []byte) {
	t.Helper()
	got, err := s.LoadSourceState(t.Context(), view)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("state of %s: %d bytes, %v; want %d bytes", view, len(got), err, len(want))
	}
}

// expectChunks checks that the store holds exactly the chunks of state b
// of view: none left over from earlier states.
func expectChunks(t *testing.T, s *Store, view string, b []byte) {
	t.Helper()
	have, err := s.chunksOf(view)
	if err != nil {
		t.Fatal(err)
	}
	_, parts := split(b)
	if len(have) != len(parts) {
		t.Errorf("view %s: the store holds %d chunks, its state has %d", view, len(have), len(parts))
	}
	for id := range parts {
		if !have[id] {
			t.Errorf("view %s: chunk %x of its state is not stored", view, id[:4])
		}
	}
}

// TestSourceStateWritesOnlyChangedChunks: a state written again after a
// small change writes the chunks that change touched, not the whole state,
// reads back exactly, and the chunks no longer listed are deleted.
func TestSourceStateWritesOnlyChangedChunks(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "state"), Options{})
	a := randomBytes(10, 600<<10)
	if n := keepAndFlush(t, s, "v", 1, a); n < len(a) {
		t.Errorf("first write: %d bytes written of a %d-byte state", n, len(a))
	}
	expectState(t, s, "v", a)

	// One more "commit": the header and an entry in the middle change,
	// an entry is appended.
	b := append([]byte(nil), a...)
	b[5] ^= 0xff
	b = append(b[:400<<10:400<<10], append(randomBytes(11, 90), b[400<<10:]...)...)
	b = append(b, randomBytes(12, 250)...)
	n := keepAndFlush(t, s, "v", 2, b)
	if n > len(b)/8 {
		t.Errorf("second write: %d bytes written of a %d-byte state, want at most an eighth", n, len(b))
	}
	expectState(t, s, "v", b)
	expectChunks(t, s, "v", b)

	// Another view with the same state holds its own chunks.
	keepAndFlush(t, s, "w", 2, b)
	if err := s.DeleteView(t.Context(), "w"); err != nil {
		t.Fatal(err)
	}
	expectState(t, s, "v", b)
	if have, err := s.chunksOf("w"); err != nil || len(have) != 0 {
		t.Errorf("a deleted view's chunks: %d left, %v", len(have), err)
	}
	if _, err := s.LoadSourceState(t.Context(), "w"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a deleted view's state: %v, want ErrNotFound", err)
	}
}

// TestSourceStateCrashBetweenSteps: chunks written without their index (a
// crash after the write's first step) leave the previous state readable,
// and the view's next write deletes them.
func TestSourceStateCrashBetweenSteps(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s := open(t, dir, Options{})
	a := randomBytes(13, 100<<10)
	keepAndFlush(t, s, "v", 1, a)
	// The first step of a write of state b, alone.
	plans, err := s.planStates([]string{"v"}, [][]byte{randomBytes(14, 100<<10)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.writeChunks(plans); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir, Options{})
	expectState(t, s, "v", a)
	c := randomBytes(15, 100<<10)
	keepAndFlush(t, s, "v", 3, c)
	expectState(t, s, "v", c)
	expectChunks(t, s, "v", c)
}

// TestSourceStateDamagedChunk: a chunk changed or lost under the store
// fails the state's read (it never reads as other bytes), and the view's
// next write heals it, even with the same state.
func TestSourceStateDamagedChunk(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "state"), Options{})
	a := randomBytes(16, 64<<10)
	keepAndFlush(t, s, "v", 1, a)
	x, parts := split(a)
	victim := x[1].id
	damaged := append([]byte(nil), parts[victim]...)
	damaged[10] ^= 1
	for version, damage := range map[uint64]func(txn *badger.Txn) error{
		2: func(txn *badger.Txn) error { return txn.Set(chunkKey("v", victim), damaged) },
		3: func(txn *badger.Txn) error { return txn.Delete(chunkKey("v", victim)) },
	} {
		if err := s.update(t.Context(), damage); err != nil {
			t.Fatal(err)
		}
		if got, err := s.LoadSourceState(t.Context(), "v"); err == nil || errors.Is(err, ErrNotFound) {
			t.Fatalf("damage %d: %d bytes, %v; want an error other than ErrNotFound", version, len(got), err)
		}
		keepAndFlush(t, s, "v", version, a)
		expectState(t, s, "v", a)
	}
}

// TestSourceStateKeptWholeByOlderBuild: a state an older build kept whole
// reads as before; the next write replaces it with chunks.
func TestSourceStateKeptWholeByOlderBuild(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := open(t, dir, Options{}).Close(); err != nil {
		t.Fatal(err)
	}
	old := randomBytes(17, 3000)
	rawSet(t, dir, map[string][]byte{string(sourceStateKey("v")): old})
	s := open(t, dir, Options{})
	expectState(t, s, "v", old)
	a := randomBytes(18, 5000)
	keepAndFlush(t, s, "v", 2, a)
	expectState(t, s, "v", a)
	err := s.view(t.Context(), func(txn *badger.Txn) error {
		_, err := txn.Get(sourceStateKey("v"))
		return err
	})
	if !errors.Is(err, badger.ErrKeyNotFound) {
		t.Errorf("the older build's whole state after a write: %v, want it deleted", err)
	}
}

// TestSourceStateWriteFails: a write whose first or second step fails
// leaves the previous state readable, and the next write leaves exactly
// the new state's chunks.
func TestSourceStateWriteFails(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "state"), Options{})
	a := randomBytes(19, 100<<10)
	keepAndFlush(t, s, "v", 1, a)
	for step := 1; step <= 2; step++ {
		b := append(append([]byte(nil), a...), randomBytes(int64(20+step), 5000)...)
		calls := 0
		s.batchFault = func() error {
			if calls++; calls == step {
				return errors.New("injected")
			}
			return nil
		}
		handOver(s, "v", uint64(10*step), b)
		s.writeStates()
		s.batchFault = nil
		expectState(t, s, "v", a)
		c := append(append([]byte(nil), a...), randomBytes(int64(30+step), 5000)...)
		keepAndFlush(t, s, "v", uint64(10*step+1), c)
		expectState(t, s, "v", c)
		expectChunks(t, s, "v", c)
		a = c
	}
}
