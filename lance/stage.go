package lance

import (
	"context"
	"errors"
	"sync"

	"github.com/mvd-project/mvd/vfs"
)

// StagedCommit is a commit whose version is built and whose files are all
// written and durable, but which is not yet visible: the first two phases
// of Table.Commit, done ahead of the decision to publish. A caller that
// expects a commit (a refresh that will most likely only move its
// watermark) stages it while it is still finding out, and then publishes
// it or discards it.
//
// Publish and Discard may be called from any goroutine, at most one of
// them, once; a StagedCommit is not otherwise safe for concurrent use.
type StagedCommit struct {
	t           *Table
	c           *Commit
	readVersion uint64
	sv          *stagedVersion

	mu   sync.Mutex
	done bool
}

// Stage builds version base.Version+1 as Commit would, writes every file
// of it and syncs them, and returns it unpublished. Only commits that
// refuse rebases (RebaseNever) can be staged: the version number is fixed
// when it is built. Publish then fails with a *ConflictError if another
// writer took the version meanwhile.
func (t *Table) Stage(ctx context.Context, base *Snapshot, c *Commit) (*StagedCommit, error) {
	if c != nil {
		defer c.Pending.Abort() // unless the staging synced it
	}
	if c != nil && c.Rebase != RebaseNever {
		return nil, t.errorf(0, "stage commit", "only a commit that refuses rebases (RebaseNever) can be staged")
	}
	naming, err := t.checkCommit(ctx, base, c, "stage commit")
	if err != nil {
		return nil, err
	}
	batch := c.Pending
	if batch == nil {
		batch = vfs.NewSyncBatch(t.fs)
	}
	sv, err := t.buildAndStage(base.Manifest, c, naming, batch)
	if err != nil {
		return nil, t.wrap(base.Version+1, "stage commit", err)
	}
	return &StagedCommit{t: t, c: c, readVersion: base.Version, sv: sv}, nil
}

// Version is the version the commit makes when published.
func (s *StagedCommit) Version() uint64 { return s.sv.version }

// take marks the staged commit used; false if it already was.
func (s *StagedCommit) take() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return false
	}
	s.done = true
	return true
}

// Publish makes the staged version visible (put-if-not-exists). If another
// writer took the version, it fails with a *ConflictError naming it and
// removes what the staging wrote. Like Commit, once the manifest is
// published the commit completes regardless of ctx.
func (s *StagedCommit) Publish(ctx context.Context) (*Snapshot, error) {
	t := s.t
	if !s.take() {
		return nil, t.errorf(s.sv.version, "publish staged commit", "already published or discarded")
	}
	if err := ctx.Err(); err != nil {
		s.discard()
		return nil, t.wrap(s.sv.version, "publish staged commit", err)
	}
	m, err := t.publishOrRemove(s.sv)
	switch {
	case err == nil:
		return &Snapshot{Manifest: m, table: t}, nil
	case errors.Is(err, errVersionTaken):
		err = t.refuseRebase(s.c, s.readVersion, s.sv.version)
	}
	return nil, t.wrap(s.sv.version, "commit", err)
}

// Discard drops the staged version and removes the files it wrote; it does
// nothing after Publish. Nothing of it was ever visible.
func (s *StagedCommit) Discard() {
	if s == nil || !s.take() {
		return
	}
	s.discard()
}

func (s *StagedCommit) discard() {
	s.sv.staged.Discard()
	s.t.removeBestEffort(s.sv.b)
}
