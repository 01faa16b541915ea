//go:build linux

package vfs

import (
	"errors"
	"testing"
)

// TestPrepareTempStageSizedWritesWholeSize: the zeros written ahead, in
// chunks, cover the whole size asked for, whatever its remainder.
func TestPrepareTempStageSizedWritesWholeSize(t *testing.T) {
	for _, size := range []int{1, zeroChunk - 1, zeroChunk, 3*zeroChunk + 5} {
		st, err := PrepareTempStageSized(OS(), t.TempDir(), size)
		if errors.Is(err, errors.ErrUnsupported) {
			t.Skipf("no unnamed files here: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		fi, err := st.temp.(*tempFile).Stat()
		st.Discard()
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() != int64(size) {
			t.Errorf("prepared %d bytes, the file holds %d", size, fi.Size())
		}
	}
}
