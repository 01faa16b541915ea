package lance_test

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
)

// TestStagePrebuilt: a commit with Next has the next metadata commit built
// ahead; StagePrebuilt stages it with the values filled in, refuses
// metadata it was not built for (leaving it for the commit that fits),
// uses it once, chains through the Next of the commit it stages, and
// conflicts as a staged commit does. What it publishes reads back as the
// ordinary commit of the same metadata on a twin table does, through a
// fresh handle, a stale writer that rebases over it, and LanceDB.
func TestStagePrebuilt(t *testing.T) {
	ctx := context.Background()
	tt := createBase(t, "2.2", idRange(0, 10))
	twin := createBase(t, "2.2", idRange(0, 10)) // committed to the ordinary way
	tbl := tt.tbl
	t.Cleanup(func() {
		if err := tbl.Flush(); err != nil {
			t.Error(err)
		}
	})
	stale := wrOpenTable(t, tt.root)
	staleAt := mustLatest(t, stale)
	next := func(view string) *lance.NextMetadata {
		return &lance.NextMetadata{Fixed: map[string]string{"view": view}, Variable: map[string]int{"src": 2, "ts": 5}}
	}
	md := func(view, src, ts string) map[string]string {
		return map[string]string{"view": view, "src": src, "ts": ts}
	}
	commitBoth := func(m map[string]string, n *lance.NextMetadata) *lance.Snapshot {
		t.Helper()
		s, err := tbl.Commit(ctx, mustLatest(t, tbl), &lance.Commit{SchemaMetadata: m, Rebase: lance.RebaseNever, Next: n, DeferHint: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := twin.tbl.Commit(ctx, mustLatest(t, twin.tbl), &lance.Commit{SchemaMetadata: m}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	s2 := commitBoth(md("2", "10", "11111"), next("3"))
	tbl.Flush() // waits for the next commit to be built

	// Metadata it was not built for: not staged, and it stays built.
	for _, bad := range []map[string]string{
		md("4", "11", "22222"),                              // another fixed value
		md("3", "100", "22222"),                             // a value of another length
		{"view": "3", "src": "11"},                          // a key missing
		{"view": "3", "src": "11", "ts": "22222", "x": "1"}, // one more
	} {
		sc, ok, err := tbl.StagePrebuilt(ctx, s2, &lance.Commit{SchemaMetadata: bad, Rebase: lance.RebaseNever})
		if ok || sc != nil || err != nil {
			t.Fatalf("metadata %v: staged %v, %v, %v; want not", bad, sc, ok, err)
		}
	}
	if _, ok, _ := tbl.StagePrebuilt(ctx, s2, &lance.Commit{SchemaMetadata: md("3", "11", "22222")}); ok {
		t.Fatal("a commit that may rebase was staged from the prebuilt one")
	}

	before := time.Now()
	p := tbl.Prepare()
	c3 := &lance.Commit{SchemaMetadata: md("3", "11", "22222"), Rebase: lance.RebaseNever, Prepared: p, DeferHint: true, Next: next("4")}
	sc, ok, err := tbl.StagePrebuilt(ctx, s2, c3)
	if err != nil || !ok {
		t.Fatalf("staging the prebuilt commit: %v, %v", ok, err)
	}
	s3, err := sc.Publish(ctx)
	p.Release()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := tbl.StagePrebuilt(ctx, s2, c3); ok {
		t.Fatal("the prebuilt commit was staged twice")
	}
	if _, err := twin.tbl.Commit(ctx, mustLatest(t, twin.tbl), &lance.Commit{SchemaMetadata: c3.SchemaMetadata}); err != nil {
		t.Fatal(err)
	}
	if s3.Version != s2.Version+1 || s3.Timestamp.Before(before.Truncate(time.Microsecond)) || s3.Timestamp.After(time.Now()) {
		t.Fatalf("prebuilt commit: version %d at %v, want %d between %v and now", s3.Version, s3.Timestamp, s2.Version+1, before)
	}
	fresh := mustLatest(t, wrOpenTable(t, tt.root))
	want := mustLatest(t, twin.tbl)
	samePublished(t, fresh, want)
	samePublished(t, s3, want)
	if tx, err := fresh.Transaction(ctx); err != nil || tx.Operation != lance.OpUpdateConfig || tx.ReadVersion != s2.Version {
		t.Fatalf("prebuilt commit's transaction: %+v, %v", tx, err)
	}

	// Chained: the staged commit's Next was built after it.
	tbl.Flush()
	sc4, ok, err := tbl.StagePrebuilt(ctx, s3, &lance.Commit{SchemaMetadata: md("4", "12", "33333"), Rebase: lance.RebaseNever})
	if err != nil || !ok {
		t.Fatalf("staging the next prebuilt commit: %v, %v", ok, err)
	}
	// Another writer takes the version first: the publish conflicts.
	other := wrOpenTable(t, tt.root)
	if _, err := other.Commit(ctx, mustLatest(t, other), &lance.Commit{SchemaMetadata: map[string]string{"z": "1"}}); err != nil {
		t.Fatal(err)
	}
	var ce *lance.ConflictError
	if _, err := sc4.Publish(ctx); !errors.As(err, &ce) || ce.Version != s3.Version+1 {
		t.Fatalf("publish over another writer's version: %v; want a conflict naming version %d", err, s3.Version+1)
	}

	// A stale writer rebases over the prebuilt version (it reads its
	// transaction); LanceDB reads the table.
	frags, err := datawriterWrite(tt.root, staleAt)
	if err != nil {
		t.Fatal(err)
	}
	rebased, err := stale.Commit(ctx, staleAt, &lance.Commit{Fragments: frags})
	if err != nil {
		t.Fatalf("stale append over the prebuilt version: %v", err)
	}
	if rebased.LiveRows() != 15 || rebased.Schema.Metadata["view"] != "3" || rebased.Schema.Metadata["z"] != "1" {
		t.Fatalf("rebased: %d rows, metadata %v", rebased.LiveRows(), rebased.Schema.Metadata)
	}
	t.Run("lancedb", func(t *testing.T) {
		lancedbtest.Require(t)
		wrSameRowMeta(t, other, wrLanceDBRead(t, tt.root))
	})
}

// samePublished compares what two versions committed the same way hold:
// everything but their timestamps and the tables they are in.
func samePublished(t *testing.T, got, want *lance.Snapshot) {
	t.Helper()
	if got.Version != want.Version || !maps.Equal(got.Schema.Metadata, want.Schema.Metadata) ||
		got.ReaderFlags != want.ReaderFlags || got.WriterFlags != want.WriterFlags ||
		got.NextRowID != want.NextRowID || got.MaxFragmentID != want.MaxFragmentID ||
		got.DataFileVersion != want.DataFileVersion || !reflect.DeepEqual(got.Config, want.Config) ||
		got.WriterLibrary != want.WriterLibrary || got.WriterVersion != want.WriterVersion ||
		len(got.Fragments) != len(want.Fragments) || got.LiveRows() != want.LiveRows() {
		t.Fatalf("prebuilt version %d: %+v\nordinary version %d: %+v", got.Version, got.Manifest, want.Version, want.Manifest)
	}
	for i, f := range got.Fragments {
		g := want.Fragments[i]
		if f.ID != g.ID || f.PhysicalRows != g.PhysicalRows || len(f.Files) != len(g.Files) {
			t.Fatalf("fragment %d: %+v, ordinary %+v", i, f, g)
		}
	}
}
