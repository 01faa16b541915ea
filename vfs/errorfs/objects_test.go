package errorfs_test

import (
	"errors"
	"io/fs"
	"path"
	"slices"
	"testing"

	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/errorfs"
)

// TestPutIfAbsentEveryFault fails each step of a PutIfAbsent in turn (the
// primitive itself, then every step of the local protocol): a failure
// before the link leaves no object and no staging file, and the retry
// succeeds; a failure of the directory sync after the link reports
// ErrNotDurable with the object in place. A second put of the same name
// fails with fs.ErrExist and leaves the first object unchanged.
func TestPutIfAbsentEveryFault(t *testing.T) {
	put := func(fsys vfs.FS, dir string) error {
		return vfs.Objects(fsys).PutIfAbsent(path.Join(dir, "sub", "obj"), []byte("payload"))
	}
	c := errorfs.NewCounter(errorfs.OpAll)
	if err := put(errorfs.Wrap(vfs.OS(), c), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	pts := c.Points()
	if len(pts) < 6 || pts[0].Op != errorfs.OpPutIfAbsent {
		t.Fatalf("injection points %v: want the primitive first, then the protocol's steps", pts)
	}
	for n := 1; n <= len(pts); n++ {
		dir := t.TempDir()
		inj := errorfs.FailNth(n, errorfs.OpAll)
		err := put(errorfs.Wrap(vfs.OS(), inj), dir)
		p, _ := inj.Injected()
		store := vfs.Objects(vfs.OS())
		names, _ := store.List(path.Join(dir, "sub"))
		switch {
		case p.Op == errorfs.OpRemove:
			// Only the staging name's cleanup failed: the object is whole.
			if err != nil {
				t.Errorf("point %d (%v): %v", n, p, err)
			}
		case p.Op == errorfs.OpSyncDir && path.Base(p.Path) == "sub" && slices.Contains(names, "obj"):
			if !errors.Is(err, vfs.ErrNotDurable) || !errors.Is(err, errorfs.ErrInjected) {
				t.Errorf("point %d (%v): err = %v, want ErrNotDurable", n, p, err)
			}
		default:
			if !errors.Is(err, errorfs.ErrInjected) {
				t.Errorf("point %d (%v): err = %v, want the injected error", n, p, err)
			}
			if slices.Contains(names, "obj") {
				t.Errorf("point %d (%v): the object exists after a failed put", n, p)
			}
			if err := put(vfs.OS(), dir); err != nil {
				t.Errorf("point %d (%v): retry: %v", n, p, err)
			}
		}
		b, err := vfs.ReadObject(store, path.Join(dir, "sub", "obj"))
		if err != nil || string(b) != "payload" {
			t.Errorf("point %d (%v): object reads %q, %v", n, p, b, err)
		}
		if err := put(vfs.OS(), dir); !errors.Is(err, fs.ErrExist) {
			t.Errorf("point %d: second put: err = %v, want fs.ErrExist", n, err)
		}
		raw, _ := vfs.OS().ReadDir(path.Join(dir, "sub"))
		if len(raw) != 1 && p.Op != errorfs.OpRemove { // a failed cleanup leaves a staging name, which List hides
			t.Errorf("point %d (%v): directory holds %v, want only the object (no staging files)", n, p, raw)
		}
	}
}

// TestLocalObjects covers Put (replace), List (staging names hidden) and
// Delete of the local object store.
func TestLocalObjects(t *testing.T) {
	dir := t.TempDir()
	o := vfs.Objects(vfs.OS())
	name := path.Join(dir, "hint")
	for _, v := range []string{"1", "22"} {
		if err := o.Put(name, []byte(v)); err != nil {
			t.Fatal(err)
		}
		if b, err := vfs.ReadObject(o, name); err != nil || string(b) != v {
			t.Fatalf("after Put(%q): %q, %v", v, b, err)
		}
	}
	f, err := vfs.OS().Create(path.Join(dir, ".tmp_x_1"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if names, err := o.List(dir); err != nil || !slices.Equal(names, []string{"hint"}) {
		t.Fatalf("List = %v, %v", names, err)
	}
	if err := o.Delete(name); err != nil {
		t.Fatal(err)
	}
	if err := o.Delete(name); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("second Delete: %v", err)
	}
	if _, err := o.List(path.Join(dir, "nope")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("List of nothing: %v", err)
	}
}
