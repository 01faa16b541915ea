//go:build linux

package vfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// openFile opens name through a bare descriptor, made an *os.File by
// os.NewFile. os.Open registers every descriptor with the runtime's
// poller, which refuses regular files (epoll_ctl fails with EPERM) after
// four fcntl calls: five system calls on the critical path of a refresh
// for each manifest, deletion file and version hint it opens, several
// times slower on cold caches than warm. os.NewFile of a blocking
// descriptor costs one fcntl and skips the poller, as regular files need.
func openFile(name string, flag int, perm uint32) (*os.File, error) {
	for {
		fd, err := unix.Open(name, flag|unix.O_CLOEXEC, perm)
		if err == nil {
			return os.NewFile(uintptr(fd), name), nil
		}
		if err != unix.EINTR {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
	}
}
