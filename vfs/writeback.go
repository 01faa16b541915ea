package vfs

// WritebackStarter is a file system that can start writing a file's dirty
// pages to the device without waiting for the writes to complete (Linux:
// sync_file_range with SYNC_FILE_RANGE_WRITE, which may still block while
// the device's request queue is full). It makes nothing durable: it moves
// work that the kernel would do anyway, later and in bursts, to now.
//
// Why it matters: a writer that never syncs (LanceDB on a local disk)
// leaves its files to the kernel, which writes them back every few
// seconds, all at once. A durable commit on the same disk waits for the
// device's cache flush, and a flush waits for every write in flight, so
// a commit that meets a burst waits for all of it. Started file by file
// as they are written, the same bytes reach the disk in small steps.
//
// StartWriteback may be called concurrently with anything, and on a file
// another process is writing; a missing name fails with fs.ErrNotExist.
type WritebackStarter interface {
	StartWriteback(name string) error
}

// StartWriteback starts the writeback of name on fsys if fsys can
// (WritebackStarter); on any other file system it does nothing and
// returns nil.
func StartWriteback(fsys FS, name string) error {
	if w, ok := fsys.(WritebackStarter); ok {
		return w.StartWriteback(name)
	}
	return nil
}
