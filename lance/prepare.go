package lance

import (
	"fmt"
	"sync"

	"github.com/mvd-project/mvd/vfs"
)

// Prepared is the part of a commit done before the commit is built, on a
// goroutine of its own, so that it overlaps the caller's work (reading
// the changes, writing the rows): the manifest's staging file is created
// (a new inode, as costly as an fsync on a busy filesystem).
//
// Pass it as Commit.Prepared and call Release when done, whether or not a
// commit used it. A Prepared is safe for concurrent use; a nil *Prepared
// prepares nothing.
type Prepared struct {
	staged chan struct{} // closed once the staging file is made (or not)
	done   chan struct{} // closed once the goroutine has returned
	mu     sync.Mutex
	stage  *vfs.PreparedStage // nil once taken, or if it could not be made
}

// Prepare starts preparing the table's next commit: its staging file (the
// unnamed one made after the last prepared commit, if any).
func (t *Table) Prepare() *Prepared {
	p := &Prepared{staged: make(chan struct{}), done: make(chan struct{})}
	if st := t.spare.ready(); st != nil {
		// Made already: no goroutine, whose start can cost more than the
		// file (an idle vCPU wakes slowly).
		p.stage = st
		close(p.staged)
		close(p.done)
		return p
	}
	spare := t.spare
	go func() {
		defer close(p.done)
		st := spare.take()
		if st == nil {
			if pr, ok := t.objs.(vfs.Preparer); ok {
				st, _ = pr.PrepareStage(t.path(versionsDir))
			}
		}
		p.mu.Lock()
		p.stage = st
		p.mu.Unlock()
		close(p.staged)
	}()
	return p
}

// take waits for the staging file and returns it, once.
func (p *Prepared) take() *vfs.PreparedStage {
	if p == nil {
		return nil
	}
	<-p.staged
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.stage
	p.stage = nil
	return st
}

// Release drops what no commit used and waits for the preparation's
// goroutine to return.
func (p *Prepared) Release() {
	if p == nil {
		return
	}
	p.take().Discard()
	<-p.done
}

// hintWriter writes the version hints of DeferHint commits in the
// background, one after the other, each followed by a sync of _versions/,
// which also makes a DeferSync commit's name durable. Written during a
// commit, a hint's new inode and the one it replaces join the commit's
// own journal transaction (on ext4 the directory sync after the link then
// takes up to a millisecond longer); left unsynced, they join the next
// commit's. Synced right away, they are committed between the two.
type hintWriter struct {
	mu   sync.Mutex
	done chan struct{} // closed when the last write started has ended; nil if none
	// err is the failed sync of a DeferSync commit's name: the handle
	// commits nothing more (a failed sync is not retried blindly).
	err error
}

// deferHint runs first, then writes the hint of version v, after the
// writes started before it, and syncs _versions/, in the background. name
// says that v was published by DeferSync: the sync makes it durable, and
// its failure is kept for the commits that follow.
func (t *Table) deferHint(v uint64, name bool, first func()) {
	t.hints.mu.Lock()
	defer t.hints.mu.Unlock()
	prev, done := t.hints.done, make(chan struct{})
	t.hints.done = done
	go func() {
		defer close(done)
		if prev != nil {
			<-prev
		}
		first()
		t.flushHint(v)
		dir := t.path(versionsDir)
		err := t.fs.SyncDir(dir)
		if err == nil || !name {
			return // the hint alone is best effort
		}
		t.hints.mu.Lock()
		if t.hints.err == nil {
			t.hints.err = fmt.Errorf("%w: version %d was published before its name was synced, and syncing %s failed (reopen the table to commit again): %w", vfs.ErrNotDurable, v, dir, err)
		}
		t.hints.mu.Unlock()
	}()
}

// deferredErr is the failure of a DeferSync commit's background sync, if
// one failed.
func (t *Table) deferredErr() error {
	t.hints.mu.Lock()
	defer t.hints.mu.Unlock()
	return t.hints.err
}

// SyncFailed returns the failure of a DeferSync commit's background sync
// so far, without waiting for those under way: once set, every later
// commit of this handle is refused (vfs.ErrNotDurable) and only a new
// handle commits again.
func (t *Table) SyncFailed() error { return t.deferredErr() }

// waitHints waits for the hint writes started so far.
func (t *Table) waitHints() {
	t.hints.mu.Lock()
	done := t.hints.done
	t.hints.mu.Unlock()
	if done != nil {
		<-done
	}
}

// WaitDurable waits for what commits left to the background to be
// durable (DeferSync names, DeferHint hints) and returns the failure of
// a DeferSync commit's sync, if one failed: that version may not survive
// a crash. A caller about to hand a version on (to a process that records
// it) waits for it first.
func (t *Table) WaitDurable() error {
	t.waitHints()
	return t.deferredErr()
}

// Idle waits for all the work commits left to the background (hints and
// name syncs, the next commit's build, the next staging file) and keeps
// what it made; it returns WaitDurable's error. A benchmark calls it
// between measurements, so that one's background work does not run
// inside the next.
func (t *Table) Idle() error {
	err := t.WaitDurable()
	t.next.wait()
	t.spare.wait()
	return err
}

// Flush is WaitDurable, and it drops the staging file made for a next
// prepared commit. Owners of tables they commit to with Prepare,
// DeferHint or DeferSync call it when they are done with the table, and
// before removing it.
func (t *Table) Flush() error {
	err := t.WaitDurable()
	t.next.wait()
	t.spare.discard()
	if err != nil {
		return t.wrap(0, "flush", err)
	}
	return nil
}

// flushHint writes the hint for version v unless the table has moved past
// it (the newer version's writer wrote its own): a hint must not go back
// further than one version, or a reader probing forward from it could
// stop at a gap a cleanup left.
func (t *Table) flushHint(v uint64) {
	if _, newer := t.findVersion(v + 1); newer {
		return
	}
	t.writeHint(v)
	t.noteOwnChange()
}

// spareStage is an unnamed staging file made in the background after a
// prepared commit, for the table's next one: a new inode, the costliest
// step of a small commit on a busy filesystem, made between commits. An
// unnamed file leaves nothing behind if it is never used; the Table's
// cleanup closes it when the Table is collected.
type spareStage struct {
	mu    sync.Mutex
	done  chan struct{} // closed when the making ends; nil if none started
	stage *vfs.PreparedStage
}

// Spare staging files are written ahead to a size (spareSize) for a
// manifest about the size of the last one, which is what a commit that
// moves a view's watermark writes; past maxSpareSize, writing that much
// ahead costs more than its sync saves.
const (
	spareSlack   = 512
	maxSpareSize = 256 << 10
)

// spareSize is the size to write a spare staging file to ahead, for a next
// manifest like the last one of n bytes, with room for it to grow a bit:
// whole pages, as the disk writes them. 0 for no writing ahead.
func spareSize(n int) int {
	size := (n + n/8 + spareSlack + 4095) &^ 4095
	if size > maxSpareSize {
		return 0
	}
	return size
}

// make starts making a spare in dir, written ahead to size bytes, unless
// one exists or is being made.
func (s *spareStage) make(fsys vfs.FS, dir string, size int) {
	if _, ok := fsys.(vfs.TempCreator); !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stage != nil || s.done != nil {
		return
	}
	done := make(chan struct{})
	s.done = done
	go func() {
		defer close(done)
		st, err := vfs.PrepareTempStageSized(fsys, dir, size)
		if err != nil {
			return
		}
		s.mu.Lock()
		s.stage = st
		s.mu.Unlock()
	}()
}

// take waits for a spare being made and returns it, or nil.
func (s *spareStage) take() *vfs.PreparedStage {
	s.wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.takeLocked()
}

// wait waits for the making under way, if any, leaving its file spare.
func (s *spareStage) wait() {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done != nil {
		<-done
	}
}

// takeLocked returns the spare (or nil) and forgets it; s.mu is held.
func (s *spareStage) takeLocked() *vfs.PreparedStage {
	st := s.stage
	s.stage, s.done = nil, nil
	return st
}

// ready returns the spare if it is made, without waiting, else nil.
func (s *spareStage) ready() *vfs.PreparedStage {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done == nil {
		return nil
	}
	select {
	case <-s.done:
	default:
		return nil // being made
	}
	return s.takeLocked()
}

// discard drops the spare, waiting for one being made.
func (s *spareStage) discard() { s.take().Discard() }
