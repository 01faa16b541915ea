package vfs

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"
)

func writeFile(t *testing.T, fsys FS, name, body string) {
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

// TestOSPutIfNotExists checks the two primitives commits rest on: Create
// and Link both refuse an existing name.
func TestOSPutIfNotExists(t *testing.T) {
	fsys := OS()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	writeFile(t, fsys, a, "first")
	if _, err := fsys.Create(a); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create over an existing file: err = %v, want fs.ErrExist", err)
	}
	if err := fsys.Link(a, b); err != nil {
		t.Fatal(err)
	}
	writeFile(t, fsys, filepath.Join(dir, "c"), "second")
	if err := fsys.Link(filepath.Join(dir, "c"), b); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Link over an existing name: err = %v, want fs.ErrExist", err)
	}
	got, err := ReadFile(fsys, b)
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
}

func TestCountingFS(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, OS(), filepath.Join(dir, "x"), "hello world")
	var opened []string
	c := NewCountingFS(OS(), func(name string) { opened = append(opened, filepath.Base(name)) })
	b, err := ReadFile(c, filepath.Join(dir, "x"))
	if err != nil || string(b) != "hello world" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	if c.Opens() != 1 || c.BytesRead() != 11 || c.Reads() != 1 || !slices.Equal(opened, []string{"x"}) {
		t.Fatalf("opens %d, bytes %d, reads %d, hook saw %v", c.Opens(), c.BytesRead(), c.Reads(), opened)
	}
	c.Reset()
	if c.Opens() != 0 || c.BytesRead() != 0 {
		t.Fatal("Reset did not zero the counters")
	}
}
