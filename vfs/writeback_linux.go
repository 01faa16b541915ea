//go:build linux

package vfs

import (
	"os"

	"golang.org/x/sys/unix"
)

var _ WritebackStarter = osFS{}

// StartWriteback starts writing name's dirty pages to the device and
// returns without waiting for the writes to complete (WritebackStarter).
func (osFS) StartWriteback(name string) error {
	f, err := openFile(name, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	if err := unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE); err != nil {
		f.Close()
		return &os.PathError{Op: "sync_file_range", Path: name, Err: err}
	}
	return f.Close()
}
