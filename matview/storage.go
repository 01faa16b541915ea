package matview

import (
	"context"
	"errors"
	"io/fs"
	"path"

	"github.com/mvd-project/mvd/vfs"
)

// Storage is what a view holds on disk.
type Storage struct {
	// Fragments are the fragments of its latest version.
	Fragments int `json:"fragments"`
	// Versions are the versions on disk.
	Versions int `json:"versions"`
	// Bytes is the size of every file of the view's table directory (data,
	// deletion, index and manifest files of every version kept, and mvd's
	// own state in it).
	Bytes int64 `json:"bytes"`
}

// Storage measures the view on disk: the latest version's fragments, the
// versions listed, and the bytes of its directory.
func (v *View) Storage(ctx context.Context) (Storage, error) {
	vm, _, err := v.current(ctx)
	if err != nil {
		return Storage{}, err
	}
	refs, err := v.table.Versions(ctx)
	if err != nil {
		return Storage{}, errorf(ErrStorage, err, "view '%s': list versions: %v", v.name, err)
	}
	n, err := v.db.dirBytes(ctx, v.table.Root())
	if err != nil {
		return Storage{}, errorf(ErrStorage, err, "view '%s': measure its files: %v", v.name, err)
	}
	return Storage{Fragments: len(vm.Fragments), Versions: len(refs), Bytes: n}, nil
}

// dirBytes sums the sizes of the files under dir: from one listing on
// a store that sums them so (vfs.TreeSizer: S3, a request per 1,000
// objects, not one per object). Entries that vanish while it walks (a
// concurrent cleanup) are skipped.
func (db *DB) dirBytes(ctx context.Context, dir string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if ts, ok := db.fs.(vfs.TreeSizer); ok {
		return ts.TreeBytes(dir)
	}
	names, err := db.fs.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, name := range names {
		p := path.Join(dir, name)
		st, err := db.fs.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if !st.IsDir() {
			total += st.Size()
			continue
		}
		n, err := db.dirBytes(ctx, p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
		total += n
	}
	return total, nil
}
