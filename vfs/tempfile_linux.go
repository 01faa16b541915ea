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

// Link names the file: linkat with AT_EMPTY_PATH where the process may
// (it needs CAP_DAC_READ_SEARCH before Linux 6.10), else through
// /proc/self/fd, which needs no privilege.
func (f *tempFile) Link(newname string) error {
	// AT_EMPTY_PATH first: no path lookup through /proc, a few µs on a
	// commit's critical path, where the process may use it (privileged,
	// or Linux 6.10+ for an O_TMPFILE file).
	err := unix.Linkat(int(f.Fd()), "", unix.AT_FDCWD, newname, unix.AT_EMPTY_PATH)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL) {
		// Refused (ENOENT is how the kernel says so without the privilege).
		// ENOENT for a missing directory comes back from the /proc path too.
		src := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
		err = unix.Linkat(unix.AT_FDCWD, src, unix.AT_FDCWD, newname, unix.AT_SYMLINK_FOLLOW)
	}
	if err != nil {
		return &os.LinkError{Op: "link", Old: f.Name(), New: newname, Err: err}
	}
	return nil
}
