package checkpoint

import (
	"errors"
	"path/filepath"
	"testing"
)

// TestDeleteViewDuringStateWrite: a view deleted (dropped) while the
// store's writer is writing its kept source state ends with no state: the
// write that landed after the delete is undone.
func TestDeleteViewDuringStateWrite(t *testing.T) {
	ctx := t.Context()
	s, err := Open(filepath.Join(t.TempDir(), "state"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	started, release := make(chan struct{}), make(chan struct{})
	s.KeepSourceState("v", 1, 10, func() ([]byte, error) {
		close(started)
		<-release
		return []byte("one"), nil
	})
	<-started // the writer is under way with v's state
	if err := s.DeleteView(ctx, "v"); err != nil {
		t.Fatal(err)
	}
	close(release)
	s.FlushSourceStates() // returns once the write under way has ended
	if b, err := s.LoadSourceState(ctx, "v"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("state of the deleted view: %q, %v; want ErrNotFound", b, err)
	}
}
