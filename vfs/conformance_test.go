package vfs_test

import (
	"path/filepath"
	"testing"

	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/vfstest"
)

// TestOSConformance runs the store contract (vfs/vfstest) on local disk;
// vfs/s3fs runs the same checks on S3.
func TestOSConformance(t *testing.T) {
	vfstest.Conformance(t, vfs.OS(), filepath.Join(t.TempDir(), "c"))
}
