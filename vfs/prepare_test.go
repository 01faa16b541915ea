package vfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/vfs"
)

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestPreparedStage: a stage prepared before its contents publishes like
// Stage (put-if-not-exists, nothing left behind), is refused twice or for
// another directory, and Discard leaves nothing.
func TestPreparedStage(t *testing.T) {
	dir := t.TempDir()
	objs := vfs.LocalObjects{FS: vfs.OS()}
	sub := filepath.Join(dir, "v")

	// Published: the object holds the data, the temporary name is gone.
	st, err := objs.PrepareStage(sub) // creates sub
	if err != nil {
		t.Fatal(err)
	}
	if names := entries(t, sub); len(names) != 1 || !strings.HasPrefix(names[0], ".tmp_") {
		t.Fatalf("after prepare: %v, want one temporary file", names)
	}
	b := vfs.NewSyncBatch(vfs.OS())
	staged, err := st.Stage(filepath.Join(sub, "a"), []byte("hello"), b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Stage(filepath.Join(sub, "b"), []byte("again"), vfs.NewSyncBatch(vfs.OS())); !errors.Is(err, vfs.ErrStageUsed) {
		t.Fatalf("second Stage: %v, want ErrStageUsed", err)
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := staged.Publish(nil); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(sub, "a")); err != nil || string(got) != "hello" {
		t.Fatalf("published %q, %v", got, err)
	}
	if names := entries(t, sub); !slices.Equal(names, []string{"a"}) {
		t.Fatalf("after publish: %v, want [a]", names)
	}
	st.Discard() // used: nothing to do
	if names := entries(t, sub); !slices.Equal(names, []string{"a"}) {
		t.Fatalf("discard after publish removed something: %v", names)
	}

	// The name is taken: Publish fails with fs.ErrExist, leaving a as it was.
	st2, err := objs.PrepareStage(sub)
	if err != nil {
		t.Fatal(err)
	}
	b2 := vfs.NewSyncBatch(vfs.OS())
	staged2, err := st2.Stage(filepath.Join(sub, "a"), []byte("other"), b2)
	if err != nil {
		t.Fatal(err)
	}
	if err := b2.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := staged2.Publish(nil); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("publish over a: %v, want fs.ErrExist", err)
	}
	if got, _ := os.ReadFile(filepath.Join(sub, "a")); string(got) != "hello" {
		t.Fatalf("a = %q after a refused publish", got)
	}

	// Another directory is refused; the prepared file is removed.
	st3, err := objs.PrepareStage(sub)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st3.Stage(filepath.Join(dir, "elsewhere"), []byte("x"), vfs.NewSyncBatch(vfs.OS())); err == nil {
		t.Fatal("Stage into another directory succeeded")
	}
	// Discarded unused: nothing is left.
	st4, err := objs.PrepareStage(sub)
	if err != nil {
		t.Fatal(err)
	}
	st4.Discard()
	st4.Discard()
	if names := entries(t, sub); !slices.Equal(names, []string{"a"}) {
		t.Fatalf("after discards: %v, want [a]", names)
	}
	var nilStage *vfs.PreparedStage
	nilStage.Discard()
}

// TestPreparedTempStage: an unnamed staged file publishes like a named
// one, refuses a taken name, and leaves nothing when discarded.
func TestPreparedTempStage(t *testing.T) {
	dir := t.TempDir()
	for _, fsys := range []vfs.FS{vfs.OS(), vfs.Unsynced(vfs.OS())} {
		st, err := vfs.PrepareTempStage(fsys, dir)
		if errors.Is(err, errors.ErrUnsupported) {
			t.Skipf("no unnamed files here: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if names := entries(t, dir); len(names) > 1 {
			t.Fatalf("an unnamed file shows: %v", names)
		}
		name := filepath.Join(dir, "a")
		b := vfs.NewSyncBatch(fsys)
		staged, err := st.Stage(name, []byte("hello"), b)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Sync(); err != nil {
			t.Fatal(err)
		}
		err = staged.Publish(nil)
		if vfs.IsUnsynced(fsys) {
			// a exists from the first round: the name is taken.
			if !errors.Is(err, fs.ErrExist) {
				t.Fatalf("publish over a: %v, want fs.ErrExist", err)
			}
		} else if err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(name); err != nil || string(got) != "hello" {
			t.Fatalf("a = %q, %v", got, err)
		}
		unused, err := vfs.PrepareTempStage(fsys, dir)
		if err != nil {
			t.Fatal(err)
		}
		unused.Discard()
		if names := entries(t, dir); !slices.Equal(names, []string{"a"}) {
			t.Fatalf("entries %v, want [a]", names)
		}
	}
}

// TestPreparedTempStageSized: a stage written ahead to a size publishes
// exactly the bytes staged into it, whether they fill it, fall short of
// it (the zeros written ahead must not remain) or overflow it.
func TestPreparedTempStageSized(t *testing.T) {
	const size = 4096
	for _, fsys := range []vfs.FS{vfs.OS(), vfs.Unsynced(vfs.OS())} {
		dir := t.TempDir()
		for _, n := range []int{size, 100, size + 904, 0} {
			st, err := vfs.PrepareTempStageSized(fsys, dir, size)
			if errors.Is(err, errors.ErrUnsupported) {
				t.Skipf("no unnamed files here: %v", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Size() != size {
				t.Fatalf("Size() = %d, want %d", st.Size(), size)
			}
			data := make([]byte, n)
			for i := range data {
				data[i] = byte(i%251 + 1)
			}
			name := filepath.Join(dir, fmt.Sprintf("m%d", n))
			b := vfs.NewSyncBatch(fsys)
			staged, err := st.Stage(name, data, b)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Sync(); err != nil {
				t.Fatal(err)
			}
			if err := staged.Publish(nil); err != nil {
				t.Fatal(err)
			}
			if got, err := os.ReadFile(name); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%d bytes staged: read back %d bytes (%v), not the same", n, len(got), err)
			}
		}
		unused, err := vfs.PrepareTempStageSized(fsys, dir, size)
		if err != nil {
			t.Fatal(err)
		}
		unused.Discard()
		if names := entries(t, dir); len(names) != 4 {
			t.Fatalf("entries %v, want the 4 published", names)
		}
	}
	var nilStage *vfs.PreparedStage
	if nilStage.Size() != 0 {
		t.Fatal("a nil stage has a size")
	}
}
