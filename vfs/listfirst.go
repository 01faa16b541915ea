package vfs

import (
	"io/fs"
	"path"
	"slices"
	"strings"
)

// FirstLister is an ObjectStore that lists a prefix in ascending key
// order, as S3's ListObjectsV2 does, so that the first objects under a
// directory cost one request whatever the directory holds. Lance's V2
// manifest names sort the newest version first, so the latest version of
// such a table is the first manifest of this listing.
type FirstLister interface {
	// ListFirst returns at most n (n >= 1) of the objects directly under
	// dir, smallest names first, with their sizes and modification times
	// (Name is relative to dir), in one request; more reports whether
	// objects follow them. It fails with an error wrapping fs.ErrNotExist
	// when there is nothing under dir.
	ListFirst(dir string, n int) (objs []fs.FileInfo, more bool, err error)
}

// ListFirst is FirstLister.ListFirst on fsys when it implements it, else
// the fallback a local filesystem takes: the whole directory read, sorted,
// and the first n regular entries (without the temporary names
// LocalObjects stages under) statted.
func ListFirst(fsys FS, dir string, n int) ([]fs.FileInfo, bool, error) {
	if l, ok := fsys.(FirstLister); ok {
		return l.ListFirst(dir, n)
	}
	names, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, false, err
	}
	slices.Sort(names)
	var out []fs.FileInfo
	for i, name := range names {
		if strings.HasPrefix(name, ".tmp_") {
			continue
		}
		st, err := fsys.Stat(path.Join(dir, name))
		if err != nil {
			continue // removed meanwhile, as a listing would not show it
		}
		if !st.Mode().IsRegular() {
			continue
		}
		if len(out) == n {
			return out, i < len(names), nil
		}
		out = append(out, st)
	}
	return out, false, nil
}
