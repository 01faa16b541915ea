package vfs

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
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

// TestOSOpen: what Open (a bare descriptor on Linux, see openFile) owes
// on local disk beyond the store contract, whose Open check (size,
// concurrent reads, reads after Close refused) TestOSConformance runs on
// OS: it reports a missing file as fs.ErrNotExist naming it, and refuses
// reads after Close with fs.ErrClosed rather than reading whatever file
// reuses the descriptor.
func TestOSOpen(t *testing.T) {
	fsys := OS()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	var pe *fs.PathError
	if _, err := fsys.Open(missing); !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != missing {
		t.Fatalf("Open of a missing file: %v; want fs.ErrNotExist naming it", err)
	}
	if _, err := fsys.Create(filepath.Join(missing, "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Create in a missing directory: %v; want fs.ErrNotExist", err)
	}
	name := filepath.Join(dir, "f")
	body := strings.Repeat("0123456789", 1000)
	writeFile(t, fsys, name, body)
	f, err := fsys.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "g")
	writeFile(t, fsys, other, body)
	g, err := fsys.Open(other) // likely takes the descriptor f had
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := f.ReadAt(make([]byte, 1), 0); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("ReadAt after Close: %v; want fs.ErrClosed", err)
	}
}
