package checkpoint

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

func open(t *testing.T, dir string, o Options) *Store {
	t.Helper()
	s, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestHistory(t *testing.T) {
	ctx := t.Context()
	s := open(t, t.TempDir(), Options{HistoryRetention: 5})
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i := 1; i <= 12; i++ {
		r := RefreshRecord{View: "v", Mode: "incremental", RowsWritten: uint64(i), SourceFrom: uint64(i), SourceVersion: uint64(i + 1),
			ViewVersion: uint64(i), StartedAt: start, FinishedAt: start.Add(time.Duration(i) * time.Millisecond), LagMS: float64(i)}
		if i == 7 {
			r.Mode, r.Error = "", "source dropped"
		}
		seq, err := s.AppendHistory(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if seq != uint64(i) {
			t.Fatalf("record %d got seq %d", i, seq)
		}
		// Another view's history is independent (and its name is a prefix).
		if _, err := s.AppendHistory(ctx, RefreshRecord{View: "v2", Mode: "no_op"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		view  string
		limit int
		seqs  []uint64
	}{
		{"all kept, newest first", "v", 0, []uint64{12, 11, 10, 9, 8}},
		{"limit", "v", 2, []uint64{12, 11}},
		{"limit above retention", "v", 100, []uint64{12, 11, 10, 9, 8}},
		{"other view", "v2", 3, []uint64{12, 11, 10}},
		{"no history", "v3", 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.History(ctx, tc.view, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			var seqs []uint64
			for _, r := range got {
				if r.View != tc.view {
					t.Fatalf("record of view %q in the history of %q", r.View, tc.view)
				}
				seqs = append(seqs, r.Seq)
			}
			if fmt.Sprint(seqs) != fmt.Sprint(tc.seqs) {
				t.Fatalf("seqs = %v, want %v", seqs, tc.seqs)
			}
		})
	}
	got, _ := s.History(ctx, "v", 1)
	if r := got[0]; r.RowsWritten != 12 || r.Duration != 12*time.Millisecond || r.LagMS != 12 || !r.FinishedAt.Equal(start.Add(12*time.Millisecond)) {
		t.Fatalf("newest record = %+v", r)
	}
}

func TestBlobsAndDeleteView(t *testing.T) {
	ctx := t.Context()
	s := open(t, t.TempDir(), Options{})
	big := []byte(strings.Repeat("x", 2<<20)) // lands in the value log
	for _, tc := range []struct{ view, key string }{{"v", "provenance"}, {"v", "provenance2"}, {"w", "provenance"}} {
		val := append([]byte(tc.view+"/"+tc.key+":"), big...)
		if err := s.PutBlob(ctx, tc.view, tc.key, val); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Blob(ctx, "v", "provenance")
	if err != nil || !strings.HasPrefix(string(got), "v/provenance:x") || len(got) != len("v/provenance:")+len(big) {
		t.Fatalf("blob: %d bytes, %v", len(got), err)
	}
	if _, err := s.Blob(ctx, "v", "missing"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing blob: %v", err)
	}
	if err := s.PutBlob(ctx, "v", "huge", make([]byte, MaxBlobSize+1)); err == nil {
		t.Fatal("a blob over MaxBlobSize was stored")
	}
	if err := s.DeleteBlob(ctx, "v", "provenance2"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Blob(ctx, "v", "provenance2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted blob: %v", err)
	}
	for i := 0; i < 600; i++ { // more than one delete transaction
		if _, err := s.AppendHistory(ctx, RefreshRecord{View: "v"}); err != nil {
			t.Fatal(err)
		}
	}
	s.KeepSourceState("v", 1, 1, func() ([]byte, error) { return []byte("state"), nil })
	s.FlushSourceStates()
	if err := s.DeleteView(ctx, "v"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LoadSourceState(ctx, "v"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("source state after DeleteView: %v", err)
	}
	if h, _ := s.History(ctx, "v", 0); len(h) != 0 {
		t.Fatalf("%d records after DeleteView", len(h))
	}
	if _, err := s.Blob(ctx, "v", "provenance"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("blob after DeleteView: %v", err)
	}
	if _, err := s.Blob(ctx, "w", "provenance"); err != nil {
		t.Fatalf("another view's blob went with DeleteView: %v", err)
	}
	// A recreated view starts its history again.
	if seq, err := s.AppendHistory(ctx, RefreshRecord{View: "v"}); err != nil || seq != 1 {
		t.Fatalf("first record after DeleteView: seq %d, %v", seq, err)
	}
}

func TestReopen(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := s.AppendHistory(ctx, RefreshRecord{View: "v", RowsWritten: uint64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutBlob(ctx, "v", "k", []byte("blob")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if err := s.PutBlob(ctx, "v", "k", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("write after close: %v", err)
	}
	s = open(t, dir, Options{})
	if seq, err := s.AppendHistory(ctx, RefreshRecord{View: "v"}); err != nil || seq != 4 {
		t.Fatalf("history continues at seq %d, %v; want 4", seq, err)
	}
	if b, err := s.Blob(ctx, "v", "k"); err != nil || string(b) != "blob" {
		t.Fatalf("blob after reopen: %q, %v", b, err)
	}
	if err := os.WriteFile(dir+"/not-a-dir", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir+"/not-a-dir", Options{}); err == nil {
		t.Fatal("opened a file as a state directory")
	}
}

func TestConcurrentWriters(t *testing.T) {
	ctx := t.Context()
	s := open(t, t.TempDir(), Options{HistoryRetention: 50})
	const writers, each = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				// Every writer appends to the shared view and to its own.
				if _, err := s.AppendHistory(ctx, RefreshRecord{View: "shared", RowsWritten: uint64(w*1000 + i)}); err != nil {
					errs <- err
					return
				}
				own := fmt.Sprintf("v%d", w)
				if _, err := s.AppendHistory(ctx, RefreshRecord{View: own}); err != nil {
					errs <- err
					return
				}
				if err := s.PutBlob(ctx, own, "last", []byte(fmt.Sprint(i))); err != nil {
					errs <- err
					return
				}
				if _, err := s.History(ctx, "shared", 5); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	h, err := s.History(ctx, "shared", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 50 || h[0].Seq != writers*each || h[49].Seq != writers*each-49 {
		t.Fatalf("shared history: %d records, seq %d..%d", len(h), h[len(h)-1].Seq, h[0].Seq)
	}
	for i := 1; i < len(h); i++ {
		if h[i].Seq != h[i-1].Seq-1 {
			t.Fatalf("shared history seqs not consecutive at %d: %d then %d", i, h[i-1].Seq, h[i].Seq)
		}
	}
	for w := 0; w < writers; w++ {
		b, err := s.Blob(ctx, fmt.Sprintf("v%d", w), "last")
		if err != nil || string(b) != fmt.Sprint(each-1) {
			t.Fatalf("last blob of v%d = %q, %v", w, b, err)
		}
	}
}

// lockHolderEnv makes the test binary a helper process that holds a
// state directory open until its stdin closes.
const lockHolderEnv = "MVD_CHECKPOINT_HOLD_DIR"

func TestLockHolderProcess(t *testing.T) {
	dir := os.Getenv(lockHolderEnv)
	if dir == "" {
		t.Skip("helper process for TestLockedByAnotherProcess")
	}
	s, err := Open(dir, Options{})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	_ = s.Close()
	os.Exit(0)
}

func TestLockedByAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHolderProcess$")
	cmd.Env = append(os.Environ(), lockHolderEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		t.Fatalf("helper: %q, %v", line, err)
	}
	_, err = Open(dir, Options{})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("open of a held directory: %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), fmt.Sprint(cmd.Process.Pid)) {
		t.Fatalf("error %q names neither the directory nor the holder's pid %d", err, cmd.Process.Pid)
	}
	// In this process too: a second Store on an open directory.
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	s := open(t, dir, Options{})
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open in one process: %v, want ErrLocked", err)
	}
	_ = s
}

func TestContextCanceled(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.PutBlob(ctx, "v", "k", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("put with a canceled context: %v", err)
	}
	if _, err := s.History(ctx, "v", 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("history with a canceled context: %v", err)
	}
}
