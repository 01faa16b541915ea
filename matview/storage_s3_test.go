package matview

import (
	"context"
	"testing"

	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/s3fs/s3fstest"
)

// TestStorageOnS3: a view's storage measurement on S3 (the daemon's
// per-view gauges, every second while it refreshes) counts the bytes a
// walk of its objects counts, from listings: no request per object.
func TestStorageOnS3(t *testing.T) {
	ctx := context.Background()
	srv := s3fstest.Start(t, "bkt")
	store := srv.FS(t, "bkt")
	src := newGoSource(t, store, "db", "src", 40)
	db := openDBWith(t, "s3://bkt/db", Options{StorageOptions: srv.StorageOptions()})
	v := must[*View](t)(db.CreateView(ctx, "mv", "src", Definition{Where: "amount >= 10"}))
	for i := range 4 {
		src.append(t, int64(40+10*i), int64(50+10*i))
		must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	}
	// The walk the local disk gets: ReadDir and a Stat per entry.
	walk := &DB{fs: struct{ vfs.FS }{store}}
	want, err := walk.dirBytes(ctx, "db/mv.lance")
	if err != nil || want == 0 {
		t.Fatalf("walk: %d, %v", want, err)
	}
	// The last refresh's background work (its version hint) ends first:
	// its requests are the commit's, not the measurement's.
	if err := v.Table().Idle(); err != nil {
		t.Fatal(err)
	}
	srv.Reset()
	st, err := v.Storage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Bytes != want || st.Versions != 5 {
		t.Fatalf("storage %+v; want %d bytes (as walked) and 5 versions", st, want)
	}
	kinds := map[string]int{}
	for _, r := range srv.Requests() {
		kinds[r.Kind()]++
	}
	if kinds["HEAD"] != 0 || kinds["LIST"] > 3 {
		t.Fatalf("measuring the view's storage asked %v; want no HEAD (one per object) and 3 listings (latest version, versions, sizes)", kinds)
	}
}
