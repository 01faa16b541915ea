//go:build linux

package vfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestStartWriteback: the disk starts a written file's writeback, and a
// missing file is fs.ErrNotExist.
func TestStartWriteback(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	if err := os.WriteFile(name, make([]byte, 64<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := StartWriteback(OS(), name); err != nil {
		t.Errorf("StartWriteback: %v", err)
	}
	if err := StartWriteback(OS(), filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("StartWriteback of a missing file: %v, want fs.ErrNotExist", err)
	}
}
