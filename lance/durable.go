package lance

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/mvd-project/mvd/vfs"
)

// writeNewFile creates name (failing if it exists), writes data and syncs
// it. On any failure the partial file is removed (best effort) and the
// error returned: a failed sync is never retried, since the page cache may
// have dropped the data.
func writeNewFile(fsys vfs.FS, name string, data []byte) error {
	f, err := fsys.Create(name)
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	fail := func(op string, err error) error {
		_ = f.Close()
		_ = fsys.Remove(name)
		return fmt.Errorf("%s %s: %w", op, name, err)
	}
	if _, err := f.Write(data); err != nil {
		return fail("write", err)
	}
	if err := f.Sync(); err != nil {
		return fail("sync", err)
	}
	if err := f.Close(); err != nil {
		_ = fsys.Remove(name)
		return fmt.Errorf("close %s: %w", name, err)
	}
	return nil
}

// newUUID returns a random (version 4) UUID in its canonical text form.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// randomU64 returns a random non-zero id, as Lance uses for deletion files.
func randomU64() uint64 {
	var b [8]byte
	for {
		_, _ = rand.Read(b[:])
		v := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7]&0x7f)<<56
		if v != 0 {
			return v
		}
	}
}
