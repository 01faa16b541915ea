package matview

import (
	"context"
	"errors"
	"testing"

	"github.com/mvd-project/mvd/vfs/s3fs/s3fstest"
)

// TestViewOnS3: an s3://BUCKET/PREFIX database takes a view over a source
// on the same store — created, refreshed after an append and a delete
// (incrementally, equal to the definition evaluated on the source), and
// dropped — with the store's settings as storage options; other URI
// schemes are still refused.
func TestViewOnS3(t *testing.T) {
	ctx := context.Background()
	srv := s3fstest.Start(t, "bkt")
	src := newGoSource(t, srv.FS(t, "bkt"), "pre/db", "src", 50)
	db := openDBWith(t, "s3://bkt/pre/db", Options{StorageOptions: srv.StorageOptions()})
	v := must[*View](t)(db.CreateView(ctx, "big", "src", Definition{Where: "amount >= 10"}))
	must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	checkView(t, db, "big")
	src.append(t, 50, 80)
	src.deleteWhere(t, func(id int64) bool { return id%7 != 0 })
	r := must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	if r.Mode != "incremental" {
		t.Fatalf("refresh mode %q, want incremental", r.Mode)
	}
	checkView(t, db, "big")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	again := openDBWith(t, "s3://bkt/pre/db", Options{StorageOptions: srv.StorageOptions()})
	checkView(t, again, "big")
	if err := again.DropView(ctx, "big"); err != nil {
		t.Fatal(err)
	}
	if _, err := again.OpenView(ctx, "big"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("open a dropped view: %v; want ErrNotFound", err)
	}
	if _, err := OpenWith("s3://bkt/pre/db", Options{StorageOptions: map[string]string{"aws_endpoint": srv.Endpoint}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an http endpoint without allow_http: %v; want ErrInvalid", err)
	}
}
