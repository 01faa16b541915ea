package cdc

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// writebackFS is the disk, recording every file whose writeback is
// started (and starting it, where the disk can).
type writebackFS struct {
	vfs.FS
	mu      sync.Mutex
	started []string
}

func (f *writebackFS) StartWriteback(name string) error {
	f.mu.Lock()
	f.started = append(f.started, filepath.Clean(name))
	f.mu.Unlock()
	return vfs.StartWriteback(f.FS, name)
}

func (f *writebackFS) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.started)
}

// TestWritebackOfNewVersions: after reporting a version, the watcher
// starts the writeback of what that version added (its manifest, its
// transaction file and the data files of its new fragments), and of
// nothing older.
func TestWritebackOfNewVersions(t *testing.T) {
	dir := t.TempDir()
	root := createTable(t, dir, "src", 10, false)
	fsys := &writebackFS{FS: vfs.OS()}
	c := startWatcher(t, Options{Dir: dir, FS: fsys, Mode: ModePoll, PollInterval: 5 * time.Millisecond, WritebackAfter: time.Nanosecond})
	c.waitFor("src added", hasEvent(KindAdded, "src", 1))
	c.w.Watch("src", 1)
	appended := appendRows(t, root, 10, 15)
	deleted := deleteRowIDs(t, root, 3)
	c.waitFor("the delete", hasEvent(KindVersion, "src", deleted))

	tbl, err := lance.Open(context.Background(), vfs.OS(), root)
	if err != nil {
		t.Fatal(err)
	}
	version := func(v uint64) *lance.Snapshot {
		s, err := tbl.Checkout(context.Background(), v)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// added is what version v added: its manifest and transaction file,
	// and the data file of its last fragment if it appended one.
	added := func(v uint64, appended bool) []string {
		s := version(v)
		out := []string{filepath.Join(root, "_versions", s.File)}
		if s.TransactionFile != "" {
			out = append(out, filepath.Join(root, "_transactions", s.TransactionFile))
		}
		if appended {
			frag := s.Fragments[len(s.Fragments)-1]
			if frag.ID <= uint64(version(v-1).MaxFragmentID) || len(frag.Files) != 1 || frag.Files[0].SizeBytes == 0 {
				t.Fatalf("version %d: last fragment %+v is not an append's", v, frag)
			}
			out = append(out, filepath.Join(root, "data", frag.Files[0].Path))
		}
		return out
	}
	want := append(added(appended, true), added(deleted, false)...)
	waitWriteback(t, fsys, want)
	for _, name := range want {
		if _, err := vfs.OS().Stat(name); err != nil {
			t.Errorf("%s: %v (not a file the version added)", name, err)
		}
	}
}

// waitWriteback polls until fsys has started the writeback of exactly
// want, in any order, failing after a deadline.
func waitWriteback(t *testing.T, fsys *writebackFS, want []string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := fsys.names()
		slices.Sort(got)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("writeback started of\n%v\nwant\n%v", got, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestWritebackOff: no writeback where it is turned off, on an object
// store, or on a file system that cannot start one.
func TestWritebackOff(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"negative delay", Options{FS: &writebackFS{FS: vfs.OS()}, WritebackAfter: -1}},
		{"object store", Options{FS: &writebackFS{FS: vfs.OS()}, ObjectStore: true}},
		{"file system without writeback", Options{FS: struct{ vfs.FS }{vfs.OS()}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Dir = t.TempDir()
			w, err := New(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if w.wb != nil {
				t.Errorf("writeback on")
			}
		})
	}
	w, err := New(Options{Dir: t.TempDir(), FS: &writebackFS{FS: vfs.OS()}})
	if err != nil {
		t.Fatal(err)
	}
	if w.wb == nil || w.wb.after != DefaultWritebackAfter {
		t.Errorf("default: writeback %+v, want one after %v", w.wb, DefaultWritebackAfter)
	}
}

// TestWritebackDataCap: a version's data files are left to the kernel when
// they hold more than maxData; its manifest and transaction never are.
func TestWritebackDataCap(t *testing.T) {
	meta, data := []string{"t/_versions/2.manifest", "t/_transactions/2.txn"}, []string{"t/data/a.lance", "t/data/b.lance"}
	for _, tc := range []struct {
		name      string
		dataBytes uint64
		want      []string
	}{
		{"under the cap", 100, append(slices.Clone(meta), data...)},
		{"at the cap", 1000, append(slices.Clone(meta), data...)},
		{"over the cap", 1001, meta},
		{"no new data", 0, meta},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWriteback(&writebackFS{FS: vfs.OS()}, time.Second, quietLog)
			w.maxData = 1000
			d := data
			if tc.dataBytes == 0 {
				d = nil
			}
			before := time.Now()
			w.add(slices.Clone(meta), d, tc.dataBytes)
			after := time.Now()
			select {
			case p := <-w.queue:
				if !slices.Equal(p.paths, tc.want) {
					t.Errorf("queued %v, want %v", p.paths, tc.want)
				}
				if p.at.Before(before.Add(time.Second)) || p.at.After(after.Add(time.Second)) {
					t.Errorf("due at %v, want the delay (1s) after %v", p.at, before)
				}
			default:
				t.Fatal("nothing queued")
			}
		})
	}
}

// TestWritebackQueueFull: a version that finds the queue full is left to
// the kernel; the watcher is never held up by its writeback.
func TestWritebackQueueFull(t *testing.T) {
	w := newWriteback(&writebackFS{FS: vfs.OS()}, time.Second, quietLog)
	for range writebackQueue + 10 { // no run goroutine: nothing drains it
		w.add([]string{"t/_versions/2.manifest"}, nil, 0)
	}
	if len(w.queue) != writebackQueue {
		t.Errorf("%d queued, want %d", len(w.queue), writebackQueue)
	}
}

// TestNewFiles: what a version added, found from its manifest alone.
func TestNewFiles(t *testing.T) {
	frag := func(id uint64, files ...lance.DataFile) *lance.Fragment {
		return &lance.Fragment{ID: id, Files: files}
	}
	file := func(name string, size uint64) lance.DataFile { return lance.DataFile{Path: name, SizeBytes: size} }
	version := func(maxID uint32, hasMax bool, txn string, frags ...*lance.Fragment) *snapshot {
		return &snapshot{Manifest: &lance.Manifest{File: "2.manifest", TransactionFile: txn, MaxFragmentID: maxID, HasMaxFragmentID: hasMax, Fragments: frags}}
	}
	base := version(2, true, "1.txn", frag(0, file("a", 10)), frag(1, file("b", 10)), frag(2, file("c", 10)))
	meta := []string{"t/_versions/2.manifest", "t/_transactions/2.txn"}
	for _, tc := range []struct {
		name      string
		prev, m   *snapshot
		meta      []string
		data      []string
		dataBytes uint64
	}{
		{"first version seen", nil, version(3, true, "2.txn", frag(3, file("d", 10))), meta, nil, 0},
		{"append", base, version(4, true, "2.txn", frag(0, file("a", 10)), frag(1, file("b", 10)), frag(2, file("c", 10)), frag(3, file("d", 100)), frag(4, file("e", 5), file("f", 6))),
			meta, []string{"t/data/e", "t/data/f", "t/data/d"}, 111},
		{"size not recorded", base, version(3, true, "2.txn", frag(0, file("a", 10)), frag(3, file("d", 0))), meta, []string{"t/data/d"}, math.MaxUint64},
		{"no transaction file", base, version(3, true, "", frag(3, file("d", 7))), meta[:1], []string{"t/data/d"}, 7},
		{"delete", base, version(2, true, "2.txn", frag(0, file("a", 10)), frag(2, file("c", 10))), meta, nil, 0},
		{"compaction in the middle", base, version(3, true, "2.txn", frag(3, file("g", 30)), frag(2, file("c", 10))), meta, nil, 0},
		{"after an empty version", version(0, false, "1.txn"), version(0, true, "2.txn", frag(0, file("a", 10))), meta, []string{"t/data/a"}, 10},
		{"no highest id recorded", version(0, false, "1.txn", frag(0, file("a", 10))), version(1, true, "2.txn", frag(0, file("a", 10)), frag(1, file("b", 10))), meta, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &source{root: "t"}
			meta, data, n := src.newFiles(tc.prev, tc.m)
			if !slices.Equal(meta, tc.meta) || !slices.Equal(data, tc.data) || n != tc.dataBytes {
				t.Errorf("newFiles = %v, %v, %d; want %v, %v, %d", meta, data, n, tc.meta, tc.data, tc.dataBytes)
			}
		})
	}
}
