// Package vfstest holds the checks every vfs.FS and vfs.ObjectStore must
// pass, run on local disk (package vfs's tests) and on each object store
// (vfs/s3fs), so that the stores keep one contract.
package vfstest

import (
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mvd-project/mvd/vfs"
)

// WriteFile creates name in fsys holding body, synced and closed.
func WriteFile(t testing.TB, fsys vfs.FS, name, body string) {
	t.Helper()
	f, err := fsys.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// Conformance runs the checks on fsys under the directory dir (empty,
// or missing).
func Conformance(t *testing.T, fsys vfs.FS, dir string) {
	t.Run("CreateRefusesExisting", func(t *testing.T) { createRefusesExisting(t, fsys, path.Join(dir, "create")) })
	t.Run("Open", func(t *testing.T) { open(t, fsys, path.Join(dir, "open")) })
	t.Run("ObjectStore", func(t *testing.T) { objectStore(t, fsys, vfs.Objects(fsys), path.Join(dir, "objects")) })
	t.Run("StatAndRemove", func(t *testing.T) { statAndRemove(t, fsys, path.Join(dir, "stat")) })
	t.Run("ListFirst", func(t *testing.T) { listFirst(t, fsys, path.Join(dir, "first")) })
}

// listFirst: vfs.ListFirst returns the smallest names first, with sizes
// and modification times a Stat agrees with, and whether more follow;
// sub-directories are not objects.
func listFirst(t *testing.T, fsys vfs.FS, dir string) {
	if _, _, err := vfs.ListFirst(fsys, dir, 1); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ListFirst of a missing dir: %v; want fs.ErrNotExist", err)
	}
	o := vfs.Objects(fsys)
	for _, n := range []string{"b", "c", "a", "sub/x"} {
		if err := o.PutIfAbsent(path.Join(dir, n), []byte(n+n)); err != nil {
			t.Fatal(err)
		}
	}
	names := func(fi []fs.FileInfo) (out []string) {
		for _, f := range fi {
			out = append(out, f.Name())
		}
		return out
	}
	got, more, err := vfs.ListFirst(fsys, dir, 2)
	if err != nil || !more || !slices.Equal(names(got), []string{"a", "b"}) {
		t.Fatalf("ListFirst(2) = %v, more %v, %v; want [a b], more", names(got), more, err)
	}
	st, err := fsys.Stat(path.Join(dir, "a"))
	if err != nil || got[0].Size() != 2 || !got[0].ModTime().Equal(st.ModTime()) {
		t.Fatalf("ListFirst's a: size %d, mtime %v; Stat: %v, %v", got[0].Size(), got[0].ModTime(), st, err)
	}
	got, more, err = vfs.ListFirst(fsys, dir, 5)
	if err != nil || more || !slices.Equal(names(got), []string{"a", "b", "c"}) {
		t.Fatalf("ListFirst(5) = %v, more %v, %v; want [a b c], no more", names(got), more, err)
	}
}

func createRefusesExisting(t *testing.T, fsys vfs.FS, dir string) {
	if err := fsys.MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	a, b, c := path.Join(dir, "a"), path.Join(dir, "b"), path.Join(dir, "c")
	WriteFile(t, fsys, a, "first")
	if _, err := fsys.Create(a); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create over an existing file: err = %v, want fs.ErrExist", err)
	}
	if err := fsys.Link(a, b); err != nil {
		t.Fatal(err)
	}
	WriteFile(t, fsys, c, "second")
	if err := fsys.Link(c, b); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Link over an existing name: err = %v, want fs.ErrExist", err)
	}
	got, err := vfs.ReadFile(fsys, b)
	if err != nil || string(got) != "first" {
		t.Fatalf("b = %q, %v; the losing link must not change it", got, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	names, err := fsys.ReadDir(dir)
	slices.Sort(names)
	if err != nil || !slices.Equal(names, []string{"a", "b", "c"}) {
		t.Fatalf("ReadDir = %v, %v", names, err)
	}
	if _, err := fsys.Open(dir); err == nil {
		t.Fatal("Open of a directory succeeded")
	}
	if err := fsys.Rename(c, path.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	if got, err := vfs.ReadFile(fsys, path.Join(dir, "d")); err != nil || string(got) != "second" {
		t.Fatalf("renamed d = %q, %v", got, err)
	}
	if _, err := fsys.Stat(c); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat of a renamed name: %v; want fs.ErrNotExist", err)
	}
}

func open(t *testing.T, fsys vfs.FS, dir string) {
	if err := fsys.MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Open(path.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open of a missing file: %v; want fs.ErrNotExist", err)
	}
	name := path.Join(dir, "f")
	body := strings.Repeat("0123456789", 1000)
	WriteFile(t, fsys, name, body)
	f, err := fsys.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	if f.Size() != int64(len(body)) {
		t.Fatalf("Size = %d, want %d", f.Size(), len(body))
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			buf := make([]byte, 10)
			if _, err := f.ReadAt(buf, int64(i*1000+3)); err != nil || string(buf) != "3456789012" {
				t.Errorf("ReadAt %d: %q, %v", i, buf, err)
			}
		})
	}
	wg.Wait()
	tail := make([]byte, 10)
	if n, err := f.ReadAt(tail, int64(len(body)-4)); n != 4 || err != io.EOF || string(tail[:4]) != "6789" {
		t.Fatalf("ReadAt across the end: %d, %v, %q; want 4, io.EOF", n, err, tail[:n])
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadAt(make([]byte, 1), 0); err == nil {
		t.Fatal("ReadAt after Close succeeded")
	}
}

func objectStore(t *testing.T, fsys vfs.FS, o vfs.ObjectStore, dir string) {
	if _, err := o.List(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("List of an empty dir: %v; want fs.ErrNotExist", err)
	}
	m := path.Join(dir, "_versions", "1.manifest")
	if err := o.PutIfAbsent(m, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := o.PutIfAbsent(m, []byte("two")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second PutIfAbsent: %v; want fs.ErrExist", err)
	}
	if got, err := vfs.ReadObject(o, m); err != nil || string(got) != "one" {
		t.Fatalf("after a losing PutIfAbsent: %q, %v", got, err)
	}
	hint := path.Join(dir, "_versions", "hint")
	for _, v := range []string{"a", "bb"} {
		if err := o.Put(hint, []byte(v)); err != nil {
			t.Fatal(err)
		}
		if got, err := vfs.ReadObject(o, hint); err != nil || string(got) != v {
			t.Fatalf("after Put %q: %q, %v", v, got, err)
		}
	}
	names, err := o.List(path.Join(dir, "_versions"))
	slices.Sort(names)
	if err != nil || !slices.Equal(names, []string{"1.manifest", "hint"}) {
		t.Fatalf("List = %v, %v", names, err)
	}
	top, err := o.List(dir)
	if err != nil || !slices.Equal(top, []string{"_versions"}) {
		t.Fatalf("List of the parent = %v, %v; want [_versions]", top, err)
	}
	if err := o.Delete(hint); err != nil {
		t.Fatal(err)
	}
	if err := o.Delete(hint); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Delete of a deleted object: %v; want fs.ErrNotExist", err)
	}
	if _, err := o.Open(hint); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open of a deleted object: %v; want fs.ErrNotExist", err)
	}
	if _, err := vfs.StatObject(fsys, hint); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("StatObject of a deleted object: %v; want fs.ErrNotExist", err)
	}
	if st, err := vfs.StatObject(fsys, m); err != nil || st.Size() != 3 {
		t.Fatalf("StatObject of a manifest: %v, %v", st, err)
	}
	if _, err := vfs.ReadObject(o, hint); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadObject of a deleted object: %v; want fs.ErrNotExist", err)
	}
}

func statAndRemove(t *testing.T, fsys vfs.FS, dir string) {
	if _, err := fsys.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat of a missing dir: %v; want fs.ErrNotExist", err)
	}
	sub := path.Join(dir, "sub")
	if err := fsys.MkdirAll(sub); err != nil {
		t.Fatal(err)
	}
	WriteFile(t, fsys, path.Join(sub, "x"), "12345")
	st, err := fsys.Stat(dir)
	if err != nil || !st.IsDir() {
		t.Fatalf("Stat of a dir with a file under it: %v, %v", st, err)
	}
	st, err = fsys.Stat(path.Join(sub, "x"))
	if err != nil || st.IsDir() || !st.Mode().IsRegular() || st.Size() != 5 || st.Name() != "x" {
		t.Fatalf("Stat of a file: %v, %v", st, err)
	}
	if err := fsys.Remove(sub); err == nil {
		t.Fatal("Remove of a non-empty dir succeeded")
	}
	if err := fsys.Remove(path.Join(sub, "x")); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Remove(path.Join(sub, "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Remove of a removed file: %v; want fs.ErrNotExist", err)
	}
}
