package matview

import (
	"context"
	"errors"
	"path"

	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/s3fs"
)

// openS3 returns the store of the s3://BUCKET/PREFIX database uri (settings
// from the environment, then o.StorageOptions) and the prefix, the
// database's directory in it.
func openS3(uri string, o Options) (vfs.FS, string, error) {
	bucket, prefix, err := s3fs.ParseURI(uri)
	if err != nil {
		return nil, "", errorf(ErrInvalid, err, "database %s: %v", uri, err)
	}
	settings, err := s3fs.Settings(nil, o.StorageOptions)
	if err != nil {
		return nil, "", errorf(ErrInvalid, err, "database %s: %v", uri, err)
	}
	fsys, err := s3fs.New(context.Background(), bucket, settings)
	if err != nil {
		kind := ErrStorage
		if errors.Is(err, s3fs.ErrBadOption) {
			kind = ErrInvalid
		}
		return nil, "", errorf(kind, err, "database %s: %v", uri, err)
	}
	return fsys, prefix, nil
}

// dropObjects removes a view's objects on an object store, where a
// directory cannot be renamed away: its manifests first, so that the name
// stops being a table at once and a crash halfway leaves garbage, not a
// half-deleted view.
func (db *DB) dropObjects(name string) error {
	root := db.root(name)
	if err := vfs.RemoveAll(db.fs, path.Join(root, "_versions")); err != nil {
		return errorf(ErrStorage, err, "drop view '%s': %v", name, err)
	}
	if err := vfs.RemoveAll(db.fs, root); err != nil {
		return errorf(ErrStorage, err, "drop view '%s': the view is gone but removing its files failed: %v", name, err)
	}
	return nil
}
