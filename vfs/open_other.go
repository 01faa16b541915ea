//go:build !linux

package vfs

import "os"

// openFile opens name as os.OpenFile does.
func openFile(name string, flag int, perm uint32) (*os.File, error) {
	return os.OpenFile(name, flag, os.FileMode(perm))
}
