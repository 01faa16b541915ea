package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// rawSet writes key = value straight into a closed state directory with
// Badger itself, as a foreign or corrupted writer would.
func rawSet(t *testing.T, dir string, kv map[string][]byte) {
	t.Helper()
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil).WithSyncWrites(true))
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(txn *badger.Txn) error {
		for k, v := range kv {
			if err := txn.Set([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestFormatMismatch: a state directory written with another key layout
// is refused by Open, which says which format it found, and left closed:
// opening it again is refused the same way, not as locked.
func TestFormatMismatch(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutBlob(t.Context(), "v", "k", []byte("3")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rawSet(t, dir, map[string][]byte{"format": []byte("2")})
	for i := 0; i < 2; i++ {
		s, err := Open(dir, Options{})
		if err == nil {
			s.Close()
			t.Fatalf("open %d: a format 2 directory was opened", i)
		}
		if errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), `"2"`) || !strings.Contains(err.Error(), dir) {
			t.Fatalf("open %d: err = %v, want the format named", i, err)
		}
	}
	// The directory is untouched: written back to format 1, it opens
	// with its state.
	rawSet(t, dir, map[string][]byte{"format": []byte(formatVersion)})
	s = open(t, dir, Options{})
	if b, err := s.Blob(t.Context(), "v", "k"); err != nil || string(b) != "3" {
		t.Fatalf("blob after the refused opens: %q, %v", b, err)
	}
}

// TestCorruptValues: values that do not decode (history records that are
// not JSON, history bounds of the wrong size) fail the
// reads and writes that need them with an error naming the view, and
// leave other views readable.
func TestCorruptValues(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"bad", "good"} {
		if err := s.RecordRefreshes(ctx, []RefreshRecord{{View: v, Mode: "rebuild"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rawSet(t, dir, map[string][]byte{
		string(historyKey("bad", 1)): []byte("\x00\x01"),
		string(histMetaKey("bad")):   []byte("short"),
	})
	s = open(t, dir, Options{})
	if _, err := s.History(ctx, "bad", 0); err == nil || !strings.Contains(err.Error(), "decode record") {
		t.Errorf("History with a corrupt record: %v", err)
	}
	if _, err := s.AppendHistory(ctx, RefreshRecord{View: "bad"}); err == nil || !strings.Contains(err.Error(), "bounds") {
		t.Errorf("AppendHistory over corrupt bounds: %v", err)
	}
	// A batch with a record over corrupt bounds fails whole: the other
	// view's record in it is not written either.
	if err := s.RecordRefreshes(ctx, []RefreshRecord{{View: "good", Mode: "incremental"}, {View: "bad"}}); err == nil || !strings.Contains(err.Error(), "bounds") {
		t.Errorf("RecordRefreshes over corrupt bounds: %v", err)
	}
	if h, err := s.History(ctx, "good", 0); err != nil || len(h) != 1 || h[0].Mode != "rebuild" {
		t.Errorf("the other view's history: %+v, %v", h, err)
	}
	// Dropping the view clears the corrupt records.
	if err := s.DeleteView(ctx, "bad"); err != nil {
		t.Fatal(err)
	}
	if seq, err := s.AppendHistory(ctx, RefreshRecord{View: "bad"}); err != nil || seq != 1 {
		t.Errorf("history after DeleteView: seq %d, %v", seq, err)
	}
}

// warnings is a slog handler that keeps the records at Warn and above.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, r.Message)
	return nil
}
func (w *warnings) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnings) WithGroup(string) slog.Handler      { return w }

func (w *warnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}

func vlogFiles(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.vlog"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestValueLogGC: blobs over Badger's value threshold live in the value
// log; once a value-log file holds only dead values (the view's blobs
// dropped, and counted by the compaction that dropped them), the store's
// GC goroutine rewrites that file away, the live blob still reads back,
// nothing is logged as a warning (no rewrite to do is not a problem), and
// Close ends the goroutine.
func TestValueLogGC(t *testing.T) {
	if testing.Short() {
		t.Skip("writes about 100 MiB")
	}
	ctx := t.Context()
	dir := t.TempDir()
	warn := &warnings{}
	s, err := Open(dir, Options{Logger: slog.New(warn), GCInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	blob := make([]byte, 8<<20)
	// Fill the first value-log file (64 MiB) with one view's blobs, with
	// the GC ticking meanwhile (it finds nothing to rewrite yet), and
	// begin a second one with another view's.
	for i := 0; i < 9; i++ {
		blob[0] = byte(i)
		if err := s.PutBlob(ctx, "old", fmt.Sprint(i), blob); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutBlob(ctx, "live", "k", blob); err != nil {
		t.Fatal(err)
	}
	first := vlogFiles(t, dir)
	if len(first) < 2 {
		t.Fatalf("value-log files %v: the blobs did not fill one", first)
	}
	// Badger counts a file's dead values when a compaction drops them.
	if err := s.db.DropPrefix(viewPrefix(tagBlob, "old")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(first[0]); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("value-log file %s still there: the GC never rewrote it (files %v)", first[0], vlogFiles(t, dir))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if b, err := s.Blob(ctx, "live", "k"); err != nil || len(b) != len(blob) || b[0] != 8 {
		t.Fatalf("blob after GC: %d bytes, %v", len(b), err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if w := warn.list(); len(w) != 0 {
		t.Errorf("%d warnings, the first %q", len(w), w[0])
	}
}
