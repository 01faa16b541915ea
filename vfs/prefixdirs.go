package vfs

// PrefixDirs is implemented by a file system whose directories are key
// prefixes (an object store): a directory exists while something is
// under it, needs no creation and no sync, so MkdirAllDurable asks it
// nothing (on S3 each Stat of a directory was a HEAD and a LIST on the
// path of every data file written).
type PrefixDirs interface {
	// PrefixDirs reports whether directories are key prefixes.
	PrefixDirs() bool
}

// FreshCreator is implemented by a file system that can create a file
// under a name its caller made unique (a random data file name) without
// first checking that the name is free: an existing file under it still
// fails the write, when the file is synced or closed (on S3 the upload's
// If-None-Match: *), not at creation (a HEAD before every data file).
type FreshCreator interface {
	// CreateFresh is Create for a name nobody else is expected to use.
	CreateFresh(name string) (WritableFile, error)
}

// CreateFresh creates name, which the caller made unique, through
// FreshCreator when fsys has it, else with Create.
func CreateFresh(fsys FS, name string) (WritableFile, error) {
	if c, ok := fsys.(FreshCreator); ok {
		return c.CreateFresh(name)
	}
	return fsys.Create(name)
}
