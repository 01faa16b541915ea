//go:build linux

package vfs

import (
	"errors"
	"os"
	"path"
	"strconv"

	"golang.org/x/sys/unix"
)

// CreateTemp implements TempCreator with O_TMPFILE. Filesystems without
// it (EOPNOTSUPP, EISDIR on old kernels) fail with errors.ErrUnsupported.
func (osFS) CreateTemp(dir string) (TempFile, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	if err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL) {
			return nil, &os.PathError{Op: "create unnamed file in", Path: dir, Err: errors.ErrUnsupported}
		}
		return nil, &os.PathError{Op: "create unnamed file in", Path: dir, Err: err}
	}
	return &tempFile{File: os.NewFile(uintptr(fd), path.Join(dir, "(unnamed)"))}, nil
}

type tempFile struct{ *os.File }

// Sync is fdatasync: what reading the file back needs (its data, size and
// blocks) becomes durable; its times need not.
func (f *tempFile) Sync() error {
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
	}
	return nil
}

// Link names the file through /proc/self/fd, which needs no privilege
// (linkat with AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH).
func (f *tempFile) Link(newname string) error {
	src := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	if err := unix.Linkat(unix.AT_FDCWD, src, unix.AT_FDCWD, newname, unix.AT_SYMLINK_FOLLOW); err != nil {
		return &os.LinkError{Op: "link", Old: f.Name(), New: newname, Err: err}
	}
	return nil
}
