// Package cdc watches a database directory of Lance tables and reports
// every new version of the tables it is asked to watch, with the row-id
// change set the version made.
//
// A database directory holds table NAME at DIR/NAME.lance. The Watcher
// notices tables appearing, being dropped and being recreated (a new
// incarnation: its version history starts over, so its row ids mean
// something else), and, for watched tables, every committed manifest in
// _versions/. It is driven by fsnotify where available, with a periodic
// probe and listing as the fallback for missed events, or by polling alone
// (ModePoll) where fsnotify is unavailable or the FS is not local.
//
// Only published manifests count: Lance publishes a manifest atomically
// (put-if-not-exists of a complete file), so a manifest file under its
// final name is complete. A manifest that fails to decode is reported and
// retried, and skipped over once a later version is readable.
//
// Concurrency: a Watcher is owned by the goroutine that calls Run; Watch
// and Unwatch may be called from any goroutine. Events are delivered on
// one channel, in order per table, and the Watcher blocks while the
// consumer is not receiving: no event is dropped. Run also runs one
// goroutine of its own, which starts the writeback of the new versions'
// files to the disk (writeback.go), and returns after it has stopped.
package cdc
