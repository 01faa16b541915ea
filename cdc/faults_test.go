package cdc

import (
	"errors"
	"io/fs"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mvd-project/mvd/vfs"
)

// readFaultFS fails every read under a path prefix while armed.
type readFaultFS struct {
	vfs.FS
	prefix string
	armed  atomic.Bool
}

var errEIO = errors.New("injected read error")

func (f *readFaultFS) fail(name string) bool {
	return f.armed.Load() && strings.HasPrefix(name, f.prefix)
}

func (f *readFaultFS) Open(name string) (vfs.File, error) {
	if f.fail(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errEIO}
	}
	return f.FS.Open(name)
}

func (f *readFaultFS) Stat(name string) (fs.FileInfo, error) {
	if f.fail(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: errEIO}
	}
	return f.FS.Stat(name)
}

func (f *readFaultFS) ReadDir(name string) ([]string, error) {
	if f.fail(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errEIO}
	}
	return f.FS.ReadDir(name)
}

// TestReadErrorsIsolated: while one table cannot be read, it is reported
// (once) and the other table's versions keep coming; once it is readable
// again, its versions are reported from where they stopped, none twice.
func TestReadErrorsIsolated(t *testing.T) {
	dir := t.TempDir()
	flaky := createTable(t, dir, "flaky", 5, false)
	good := createTable(t, dir, "good", 5, false)
	ffs := &readFaultFS{FS: vfs.OS(), prefix: flaky + "/_versions"}
	w, err := New(Options{Dir: dir, FS: ffs, Mode: ModePoll, Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	w.Watch("flaky", 0)
	w.Watch("good", 0)
	w.scanNow(t, true)
	ffs.armed.Store(true)
	appendRows(t, flaky, 5, 6)
	appendRows(t, good, 5, 6)
	var errs []Event
	for i := 0; i < 3; i++ {
		evs := w.scanNow(t, i == 2)
		errs = append(errs, ofTable(evs, "flaky", KindError)...)
		if got := ofTable(evs, "flaky", KindVersion, KindDropped, KindRecreated); len(got) != 0 {
			t.Fatalf("unreadable table: %v", got)
		}
		if i == 0 {
			checkContiguous(t, ofTable(evs, "good", KindVersion), 1, 2)
		}
	}
	if len(errs) != 1 || !errors.Is(errs[0].Err, errEIO) {
		t.Fatalf("errors reported: %v", errs)
	}
	v := appendRows(t, good, 6, 7)
	evs := w.scanNow(t, false)
	checkContiguous(t, ofTable(evs, "good", KindVersion), 2, v)
	ffs.armed.Store(false)
	fv := appendRows(t, flaky, 6, 7)
	evs = w.scanNow(t, false)
	checkContiguous(t, ofTable(evs, "flaky", KindVersion), 1, fv)
	if got := ofTable(evs, "flaky", KindAdded, KindRecreated, KindDropped); len(got) != 0 {
		t.Fatalf("a read error made the table look replaced: %v", got)
	}
}
