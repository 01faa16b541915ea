package bench

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// manifestSeen records when each manifest of a table appeared in its
// _versions directory, from inotify: the instant a commit became visible
// to readers. (The file's modification time will not do: Linux keeps it
// at the kernel's tick, up to 4 ms before the manifest's own timestamp.)
type manifestSeen struct {
	mu sync.Mutex
	at map[uint64]time.Time
}

// watchManifests starts recording the manifests that appear under table
// root until the test ends.
func watchManifests(tb testing.TB, root string) *manifestSeen {
	tb.Helper()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		tb.Fatal(err)
	}
	if err := w.Add(filepath.Join(root, "_versions")); err != nil {
		tb.Fatal(err)
	}
	m := &manifestSeen{at: map[uint64]time.Time{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.Events {
			now := time.Now()
			if !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Rename) && !ev.Has(fsnotify.Write) {
				continue
			}
			v, ok := manifestVersion(filepath.Base(ev.Name))
			if !ok {
				continue
			}
			m.mu.Lock()
			if _, seen := m.at[v]; !seen {
				m.at[v] = now
			}
			m.mu.Unlock()
		}
	}()
	go func() {
		for range w.Errors {
		}
	}()
	tb.Cleanup(func() { w.Close(); <-done })
	return m
}

// manifestVersion is the version a manifest file name holds, in either
// naming scheme (V2: MaxUint64 minus the version in 20 digits).
func manifestVersion(name string) (uint64, bool) {
	digits, ok := strings.CutSuffix(name, ".manifest")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	if len(digits) == 20 {
		return math.MaxUint64 - n, true
	}
	return n, true
}

// when is when version v's manifest appeared, waiting briefly for the
// event (it races mvd's own watcher).
func (m *manifestSeen) when(tb testing.TB, v uint64) time.Time {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m.mu.Lock()
		at, ok := m.at[v]
		m.mu.Unlock()
		if ok {
			return at
		}
		if time.Now().After(deadline) {
			tb.Fatalf("version %d: no manifest appeared in 10s", v)
		}
		time.Sleep(time.Millisecond)
	}
}
