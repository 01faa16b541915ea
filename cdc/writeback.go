package cdc

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"time"

	"github.com/mvd-project/mvd/vfs"
)

// DefaultWritebackAfter is how long after reporting a table's new version
// the watcher starts that version's writeback by default. A refresh of a
// small commit reads the version and commits within a few milliseconds of
// the report; its own syncs would wait for a writeback started sooner.
const DefaultWritebackAfter = 20 * time.Millisecond

// maxWritebackData is the most data a version may add for the watcher
// to start its data files' writeback: the refresh of a larger append may
// still be running when the writeback starts, and its own syncs would
// wait for it. The kernel writes such a version's data back on its own.
const maxWritebackData = 8 << 20

// writebackQueue is how many versions may wait for their writeback; a
// version that finds the queue full is left to the kernel.
const writebackQueue = 1024

// writeback starts the writeback of each new version of a source a little
// after the watcher reported it (Options.WritebackAfter): see
// vfs.WritebackStarter for why. LanceDB does not sync what it commits on
// a local disk, so the kernel writes a table's commits back every few
// seconds in one burst, and a view commit's sync that meets the burst
// waits for all of it (a one-row commit to a table of 5,000 fragments
// writes a 588 KB manifest: 6 MB/s at ten commits a second). Nothing is
// made durable, and the watcher never waits for it.
//
// Concurrency: add is called by the watcher's goroutine and never blocks;
// start runs the goroutine that starts the writebacks, and Run stops it
// before returning.
type writeback struct {
	fs      vfs.FS
	after   time.Duration
	maxData uint64 // maxWritebackData, but for tests
	log     *slog.Logger
	queue   chan pendingWriteback
}

// pendingWriteback is one version's files and when to start them.
type pendingWriteback struct {
	at    time.Time
	paths []string
}

// newWriteback returns the writeback of fsys, or nil when fsys cannot
// start one or after is negative.
func newWriteback(fsys vfs.FS, after time.Duration, log *slog.Logger) *writeback {
	if _, ok := fsys.(vfs.WritebackStarter); !ok || after < 0 {
		return nil
	}
	return &writeback{fs: fsys, after: after, maxData: maxWritebackData, log: log, queue: make(chan pendingWriteback, writebackQueue)}
}

// add queues a version's files for writeback after w.after: meta (its
// manifest and transaction), and data (its new data files, of dataBytes)
// unless they exceed w.maxData. A nil w does nothing.
func (w *writeback) add(meta, data []string, dataBytes uint64) {
	if w == nil || len(meta) == 0 {
		return
	}
	paths := meta
	if dataBytes <= w.maxData {
		paths = append(paths, data...)
	}
	select {
	case w.queue <- pendingWriteback{at: time.Now().Add(w.after), paths: paths}:
	default:
		// The kernel writes them back in its own time.
		w.log.Debug("writeback queue full; left to the kernel", "file", paths[0])
	}
}

// start runs w's goroutine until ctx ends or the function it returns is
// called, which waits for the goroutine to stop. A nil w starts nothing.
func (w *writeback) start(ctx context.Context) (stop func()) {
	if w == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// run starts each queued version's writeback when it is due, until ctx
// ends.
func (w *writeback) run(ctx context.Context) {
	for {
		var p pendingWriteback
		select {
		case <-ctx.Done():
			return
		case p = <-w.queue:
		}
		if d := time.Until(p.at); d > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(d):
			}
		}
		for _, name := range p.paths {
			if ctx.Err() != nil {
				return
			}
			err := vfs.StartWriteback(w.fs, name)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				// Harmless: the kernel writes the file back anyway.
				w.log.Debug("start writeback", "file", name, "err", err)
			}
		}
	}
}
