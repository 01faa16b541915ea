package lance_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/lance"
)

// TestStageCommit: a staged commit is invisible until published; published
// it is the version Commit would have made; discarded, or beaten to its
// version by another writer, it leaves no file behind, and the loser gets
// a *ConflictError naming the winner.
func TestStageCommit(t *testing.T) {
	ctx := context.Background()
	tt := createBase(t, "2.2", idRange(0, 10))
	tbl := tt.tbl
	noStaging := func() {
		t.Helper()
		for _, e := range must(os.ReadDir(filepath.Join(tt.root, "_versions"))) {
			if strings.HasPrefix(e.Name(), ".tmp") {
				t.Errorf("staging file %s left behind", e.Name())
			}
		}
	}
	stamp := func(v string) *lance.Commit {
		return &lance.Commit{SchemaMetadata: map[string]string{"k": v}, Rebase: lance.RebaseNever}
	}
	if _, err := tbl.Stage(ctx, mustLatest(t, tbl), &lance.Commit{SchemaMetadata: map[string]string{"k": "x"}}); err == nil {
		t.Fatal("a commit that may rebase was staged")
	}

	base := mustLatest(t, tbl)
	sc, err := tbl.Stage(ctx, base, stamp("a"))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Version() != base.Version+1 || mustLatest(t, tbl).Version != base.Version {
		t.Fatalf("staged %d; latest %d: want %d unpublished", sc.Version(), mustLatest(t, tbl).Version, base.Version+1)
	}
	s, err := sc.Publish(ctx)
	if err != nil || s.Version != base.Version+1 || s.Schema.Metadata["k"] != "a" {
		t.Fatalf("publish: %v %+v", err, s)
	}
	if got := mustLatest(t, tbl); got.Version != s.Version || got.Schema.Metadata["k"] != "a" {
		t.Fatalf("latest %d %q after the publish", got.Version, got.Schema.Metadata["k"])
	}
	if _, err := sc.Publish(ctx); err == nil {
		t.Fatal("a staged commit was published twice")
	}
	noStaging()

	base = mustLatest(t, tbl)
	sc = must(tbl.Stage(ctx, base, stamp("b")))
	sc.Discard()
	sc.Discard() // idempotent
	if got := mustLatest(t, tbl); got.Version != base.Version {
		t.Fatalf("a discarded commit made version %d", got.Version)
	}
	noStaging()

	// Another writer takes the version between the staging and the publish.
	base = mustLatest(t, tbl)
	sc = must(tbl.Stage(ctx, base, stamp("c")))
	won, err := appendIDs(tt.root, idRange(100, 101), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sc.Publish(ctx)
	var ce *lance.ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, lance.ErrConflict) || ce.Version != won.Version {
		t.Fatalf("publish after another writer: %v, want a conflict with version %d", err, won.Version)
	}
	if got := mustLatest(t, tbl); got.Version != won.Version || got.Schema.Metadata["k"] == "c" {
		t.Fatalf("latest %d %q: the loser's commit is visible", got.Version, got.Schema.Metadata["k"])
	}
	noStaging()
}
