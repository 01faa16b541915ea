package errorfs_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/errorfs"
)

// writeAndLink is a small durable write: create, write, sync, close, link,
// sync the directory.
func writeAndLink(fsys vfs.FS, dir string) error {
	tmp := filepath.Join(dir, "tmp")
	f, err := fsys.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write([]byte("hello")); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := fsys.Link(tmp, filepath.Join(dir, "final")); err != nil {
		return err
	}
	return fsys.SyncDir(dir)
}

func TestCountThenFailEach(t *testing.T) {
	c := errorfs.NewCounter(errorfs.OpAll)
	if err := writeAndLink(errorfs.Wrap(vfs.OS(), c), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	want := []errorfs.Op{errorfs.OpCreate, errorfs.OpWrite, errorfs.OpSync, errorfs.OpClose, errorfs.OpLink, errorfs.OpSyncDir}
	pts := c.Points()
	if len(pts) != len(want) {
		t.Fatalf("points = %v, want ops %v", pts, want)
	}
	for i, p := range pts {
		if p.Op != want[i] {
			t.Errorf("point %d = %v, want %v", i, p, want[i])
		}
	}
	for n := 1; n <= c.Count(); n++ {
		dir := t.TempDir()
		inj := errorfs.FailNth(n, errorfs.OpAll)
		err := writeAndLink(errorfs.Wrap(vfs.OS(), inj), dir)
		if !errors.Is(err, errorfs.ErrInjected) {
			t.Fatalf("n=%d: err = %v, want ErrInjected", n, err)
		}
		p, ok := inj.Injected()
		if !ok || p.Op != want[n-1] {
			t.Errorf("n=%d: injected at %v (%v), want %v", n, p, ok, want[n-1])
		}
		// An injected failure happens before the operation.
		_, statErr := os.Stat(filepath.Join(dir, "final"))
		if linked := statErr == nil; linked != (n > 5) {
			t.Errorf("n=%d: final exists = %v", n, linked)
		}
	}
	// Past the last point nothing fails.
	inj := errorfs.FailNth(c.Count()+1, errorfs.OpAll)
	if err := writeAndLink(errorfs.Wrap(vfs.OS(), inj), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if _, ok := inj.Injected(); ok {
		t.Error("Injected reports a failure that did not happen")
	}
}

func TestSelectedOpsOnly(t *testing.T) {
	c := errorfs.NewCounter(errorfs.OpSync | errorfs.OpSyncDir)
	if err := writeAndLink(errorfs.Wrap(vfs.OS(), c), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if c.Count() != 2 {
		t.Fatalf("points = %v, want a sync and a syncdir", c.Points())
	}
	inj := errorfs.FailNth(2, errorfs.OpSync|errorfs.OpSyncDir)
	err := writeAndLink(errorfs.Wrap(vfs.OS(), inj), t.TempDir())
	if p, _ := inj.Injected(); !errors.Is(err, errorfs.ErrInjected) || p.Op != errorfs.OpSyncDir {
		t.Fatalf("err = %v at %v, want an injected syncdir failure", err, p)
	}
}
