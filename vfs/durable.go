package vfs

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
)

// MkdirAllDurable creates dir and any missing parents, then syncs the
// parent of every directory it created, so new directories survive a crash
// along with the files later written into them. On a file system whose
// directories are key prefixes (PrefixDirs) there is nothing to do.
func MkdirAllDurable(fsys FS, dir string) error {
	if p, ok := fsys.(PrefixDirs); ok && p.PrefixDirs() {
		return nil
	}
	var missing []string
	for d := path.Clean(dir); ; d = path.Dir(d) {
		if _, err := fsys.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		if path.Dir(d) == d {
			break
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := fsys.MkdirAll(dir); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := fsys.SyncDir(path.Dir(missing[i])); err != nil {
			return fmt.Errorf("sync %s: %w", path.Dir(missing[i]), err)
		}
	}
	return nil
}

// RemoveAll removes p and, if it is a directory, everything under it
// (path.Join names). It goes on past a failure and returns the first one;
// a p that does not exist is no error.
func RemoveAll(fsys FS, p string) error {
	st, err := fsys.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	var first error
	if st.IsDir() {
		ents, err := fsys.ReadDir(p)
		first = err
		for _, e := range ents {
			if err := RemoveAll(fsys, path.Join(p, e)); err != nil && first == nil {
				first = err
			}
		}
	}
	// On an object store a directory is gone with its last entry, so
	// removing it then finds nothing: that is no failure.
	if err := fsys.Remove(p); err != nil && first == nil && !(st.IsDir() && errors.Is(err, fs.ErrNotExist)) {
		first = err
	}
	return first
}
