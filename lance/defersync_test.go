package lance_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/errorfs"
)

// dirSyncGate holds each sync of a _versions/ directory while armed: the
// sync announces itself on entered and returns what release sends.
type dirSyncGate struct {
	armed   atomic.Bool
	entered chan struct{}
	release chan error
}

func newDirSyncGate() *dirSyncGate {
	return &dirSyncGate{entered: make(chan struct{}), release: make(chan error)}
}

func (g *dirSyncGate) MaybeInject(p errorfs.Point) error {
	if p.Op != errorfs.OpSyncDir || !strings.HasSuffix(p.Path, "_versions") || !g.armed.Load() {
		return nil
	}
	g.entered <- struct{}{}
	return <-g.release
}

// within waits for ch for at most 10 s.
func within(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: not within 10 s", what)
	}
}

// TestDeferSync: a commit that changes no rows, with DeferSync, returns
// while the sync of _versions/ that makes its name durable is still held,
// and is visible meanwhile; a commit with rows waits for that sync before
// it returns. When the deferred sync fails, WaitDurable, Flush and every
// later commit through the handle (Commit, Stage, StagePrebuilt) fail
// with vfs.ErrNotDurable and commit nothing; a new handle commits.
func TestDeferSync(t *testing.T) {
	ctx := context.Background()
	tt := createBase(t, "2.2", idRange(0, 10))
	if err := tt.tbl.Flush(); err != nil {
		t.Fatal(err)
	}
	gate := newDirSyncGate()
	tbl, err := lance.Open(ctx, errorfs.Wrap(vfs.OS(), gate), tt.root)
	if err != nil {
		t.Fatal(err)
	}
	commitAsync := func(c *lance.Commit) (<-chan struct{}, *error) {
		done, errp := make(chan struct{}), new(error)
		base := mustLatest(t, tbl)
		go func() {
			defer close(done)
			_, *errp = tbl.Commit(ctx, base, c)
		}()
		return done, errp
	}
	latest := func() uint64 { return mustLatest(t, wrOpenTable(t, tt.root)).Version }
	stamp := func(v string) *lance.Commit {
		return &lance.Commit{SchemaMetadata: map[string]string{"mark": v}, Rebase: lance.RebaseNever, DeferSync: true,
			Next: &lance.NextMetadata{Variable: map[string]int{"mark": 1}}}
	}

	// A watermark-like commit returns before its name is synced.
	gate.armed.Store(true)
	v0 := latest()
	done, errp := commitAsync(stamp("1"))
	within(t, done, "the DeferSync commit, its name's sync held")
	if *errp != nil {
		t.Fatal(*errp)
	}
	if got := latest(); got != v0+1 {
		t.Fatalf("while its name's sync is held, a fresh handle sees version %d, want %d", got, v0+1)
	}
	within(t, gate.entered, "the deferred sync of _versions/")
	gate.release <- nil
	if err := tbl.WaitDurable(); err != nil {
		t.Fatal(err)
	}

	// A commit with rows does not return before its name is synced, even
	// with DeferSync.
	del := &lance.Commit{DeleteRowIDs: roaring64.BitmapOf(3), DeferSync: true}
	done, errp = commitAsync(del)
	within(t, gate.entered, "the delete's sync of _versions/")
	select {
	case <-done:
		t.Fatal("a commit that deletes rows returned before its name was synced")
	default:
	}
	gate.release <- nil
	within(t, done, "the delete, its sync released")
	if *errp != nil {
		t.Fatal(*errp)
	}

	// The deferred sync fails: the handle commits nothing more.
	done, errp = commitAsync(stamp("2"))
	within(t, done, "the second DeferSync commit")
	if *errp != nil {
		t.Fatal(*errp)
	}
	within(t, gate.entered, "the second deferred sync")
	gate.release <- fmt.Errorf("disk on fire: %w", errorfs.ErrInjected)
	gate.armed.Store(false)
	err = tbl.WaitDurable()
	if !errors.Is(err, vfs.ErrNotDurable) || !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("WaitDurable after a failed deferred sync: %v; want vfs.ErrNotDurable wrapping the failure", err)
	}
	at := latest()
	base := mustLatest(t, tbl)
	if _, err := tbl.Commit(ctx, base, stamp("3")); !errors.Is(err, vfs.ErrNotDurable) {
		t.Fatalf("a commit after a failed deferred sync: %v; want vfs.ErrNotDurable", err)
	}
	if _, err := tbl.Commit(ctx, base, &lance.Commit{DeleteRowIDs: roaring64.BitmapOf(4)}); !errors.Is(err, vfs.ErrNotDurable) {
		t.Fatalf("a delete after a failed deferred sync: %v; want vfs.ErrNotDurable", err)
	}
	if _, err := tbl.Stage(ctx, base, stamp("3")); !errors.Is(err, vfs.ErrNotDurable) {
		t.Fatalf("a staging after a failed deferred sync: %v; want vfs.ErrNotDurable", err)
	}
	if _, ok, err := tbl.StagePrebuilt(ctx, base, stamp("3")); !ok || !errors.Is(err, vfs.ErrNotDurable) {
		t.Fatalf("a prebuilt staging after a failed deferred sync: %v, %v; want vfs.ErrNotDurable", ok, err)
	}
	if got := latest(); got != at {
		t.Fatalf("the refused commits moved the table from version %d to %d", at, got)
	}
	if err := tbl.Flush(); !errors.Is(err, vfs.ErrNotDurable) {
		t.Fatalf("Flush after a failed deferred sync: %v; want vfs.ErrNotDurable", err)
	}

	fresh := wrOpenTable(t, tt.root)
	if _, err := fresh.Commit(ctx, mustLatest(t, fresh), stamp("4")); err != nil {
		t.Fatalf("a new handle: %v", err)
	}
	if err := fresh.Flush(); err != nil {
		t.Fatal(err)
	}
}

// TestDeferSyncStaged: a staged metadata-only commit with DeferSync
// (what a view's speculation publishes) also returns from Publish before
// its name's sync, and the sync follows.
func TestDeferSyncStaged(t *testing.T) {
	ctx := context.Background()
	tt := createBase(t, "2.2", idRange(0, 10))
	gate := newDirSyncGate()
	tbl, err := lance.Open(ctx, errorfs.Wrap(vfs.OS(), gate), tt.root)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := tbl.Stage(ctx, mustLatest(t, tbl), &lance.Commit{SchemaMetadata: map[string]string{"mark": "1"}, Rebase: lance.RebaseNever, DeferSync: true})
	if err != nil {
		t.Fatal(err)
	}
	gate.armed.Store(true)
	done := make(chan struct{})
	var perr error
	go func() {
		defer close(done)
		_, perr = sc.Publish(ctx)
	}()
	within(t, done, "Publish, its name's sync held")
	if perr != nil {
		t.Fatal(perr)
	}
	within(t, gate.entered, "the deferred sync of _versions/")
	gate.release <- nil
	if err := tbl.Flush(); err != nil {
		t.Fatal(err)
	}
}

// TestIdle: Idle waits for what a commit left to the background (here
// the next commit's build) and keeps it: the built commit is then there
// to stage.
func TestIdle(t *testing.T) {
	ctx := context.Background()
	tt := createBase(t, "2.2", idRange(0, 10))
	tbl := tt.tbl
	md := func(v string) map[string]string { return map[string]string{"mark": v} }
	next := &lance.NextMetadata{Variable: map[string]int{"mark": 1}}
	// Durable when it returns: the build of the next commit is all that
	// is left running.
	s, err := tbl.Commit(ctx, mustLatest(t, tbl), &lance.Commit{SchemaMetadata: md("1"), Rebase: lance.RebaseNever, Next: next})
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.Idle(); err != nil {
		t.Fatal(err)
	}
	sc, ok, err := tbl.StagePrebuilt(ctx, s, &lance.Commit{SchemaMetadata: md("2"), Rebase: lance.RebaseNever, DeferSync: true})
	if err != nil || !ok {
		t.Fatalf("after Idle, the commit built ahead: %v, %v; want it staged", ok, err)
	}
	if _, err := sc.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Flush(); err != nil {
		t.Fatal(err)
	}
}
