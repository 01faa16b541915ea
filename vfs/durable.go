package vfs

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
)

// MkdirAllDurable creates dir and any missing parents, then syncs the
// parent of every directory it created, so new directories survive a crash
// along with the files later written into them.
func MkdirAllDurable(fsys FS, dir string) error {
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
