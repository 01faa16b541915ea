package serveinfo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

func TestServeInfo(t *testing.T) {
	dir := t.TempDir()
	want := Info{NATSURL: "nats://127.0.0.1:4222", Token: "secret", AdminAddr: "127.0.0.1:7480", PID: 42, DB: "/db"}
	if err := Write(dir, want); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, File))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	got, err := Read(dir)
	want.Schema = 1
	if err != nil || got != want {
		t.Fatalf("read %+v, %v; want %+v", got, err, want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	if err := Remove(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after remove: %v", err)
	}
	if err := Remove(dir); err != nil {
		t.Errorf("second remove: %v", err)
	}
}

// TestServeInfoAtomic: a reader racing with rewrites always sees a whole
// file, never a partial one or none.
func TestServeInfoAtomic(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, Info{PID: 1}); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var bad atomic.Value
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if _, err := Read(dir); err != nil {
				bad.Store(err)
				return
			}
		}
	}()
	for i := 0; i < 200; i++ {
		if err := Write(dir, Info{PID: i, NATSURL: string(make([]byte, i*10))}); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if err := bad.Load(); err != nil {
		t.Fatalf("reader saw: %v", err)
	}
}
