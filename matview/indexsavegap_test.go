package matview

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mvd-project/mvd/provenance"
	"github.com/mvd-project/mvd/vfs"
)

// TestIndexSaveDue: a cleanup saves the provenance index first unless the
// last save was costly and recent: saves take at most about 1% of the
// time, and never wait longer than indexSaveEvery.
func TestIndexSaveDue(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name    string
		since   time.Duration // from the last save to now
		savedAt time.Time
		took    time.Duration
		want    bool
	}{
		{"never saved", 0, time.Time{}, 0, true},
		{"cheap, just saved", 0, t0, time.Millisecond, true},
		{"cheap limit", 0, t0, indexSaveCheap - 1, true},
		{"costly, recent", time.Second, t0, 50 * time.Millisecond, false},
		{"costly, 100 times its duration ago", 5 * time.Second, t0, 50 * time.Millisecond, true},
		{"very costly, recent", 20 * time.Second, t0, time.Second, false},
		{"very costly, indexSaveEvery ago", indexSaveEvery, t0, time.Second, true},
		{"clock went back", -time.Minute, t0, time.Second, false},
	} {
		now := t0.Add(c.since)
		if got := indexSaveDue(now, c.savedAt, c.took); got != c.want {
			t.Errorf("%s: indexSaveDue(+%v, took %v) = %v, want %v", c.name, c.since, c.took, got, c.want)
		}
	}
}

// TestCleanupKeepsIndexFileVersion: when a cleanup does not save the
// index (its last save was costly and recent), it keeps the version the
// file on disk reflects and removes the ones between it and the latest;
// that file is then caught up to the latest version (which compares the
// two), not rebuilt, and the view stays right.
func TestCleanupKeepsIndexFileVersion(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := newGoSource(t, vfs.OS(), dir, "src", 100)
	db := openDB(t, dir)
	v := must[*View](t)(db.CreateView(ctx, "v", "src", Definition{Where: "amount > 20"}))
	must[*Result](t)(v.Refresh(ctx, RefreshOptions{})) // a rebuild: saves the index
	saved := v.indexFileVersion()
	if saved == 0 {
		t.Fatal("the rebuild saved no index")
	}
	// The last save looks costly and recent: the cleanups below skip it.
	v.mu.Lock()
	v.savedAt, v.saveTook = time.Now(), time.Second
	v.mu.Unlock()
	for i := int64(0); i < 4; i++ {
		src.append(t, 100+5*i, 105+5*i)
		must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	}
	latest := mustLatest(t, v).Version
	res := must[CleanupResult](t)(v.CleanupVersions(ctx, CleanupOptions{Retention: &Retention{Keep: 1}}))
	if got := viewVersions(t, v); !slices.Equal(got, []uint64{saved, latest}) {
		t.Fatalf("cleanup %+v left versions %v; want %d (the index file's) and %d", res, got, saved, latest)
	}
	if v.indexFileVersion() != saved {
		t.Fatalf("the index was saved at %d, want the file left at %d", v.indexFileVersion(), saved)
	}
	x, err := provenance.Load(vfs.OS(), v.Table().Root(), v.incarnation)
	if err != nil || x.Version != saved {
		t.Fatalf("index file: %v, %v; want version %d", x, err, saved)
	}
	if err := provenance.CatchUp(ctx, x, mustLatest(t, v)); err != nil {
		t.Fatalf("catch up the index file from version %d to %d: %v", saved, latest, err)
	}
	// Once due, the cleanup saves the index, and the older version goes.
	v.mu.Lock()
	v.saveTook = time.Millisecond
	v.mu.Unlock()
	must[CleanupResult](t)(v.CleanupVersions(ctx, CleanupOptions{Retention: &Retention{Keep: 1}}))
	if got := viewVersions(t, v); !slices.Equal(got, []uint64{latest}) {
		t.Fatalf("versions after a cleanup that saved the index: %v, want [%d]", got, latest)
	}
	checkView(t, db, "v")
}
