//go:build linux

package vfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncDir fsyncs the directory dir through a bare descriptor (os.Open
// adds a stat and poller bookkeeping to a commit's critical path).
func syncDir(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	if err := unix.Fsync(fd); err != nil {
		unix.Close(fd)
		return &os.PathError{Op: "fsync", Path: dir, Err: err}
	}
	if err := unix.Close(fd); err != nil {
		return &os.PathError{Op: "close", Path: dir, Err: err}
	}
	return nil
}
