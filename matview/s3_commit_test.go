package matview

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mvd-project/mvd/vfs/s3fs"
	"github.com/mvd-project/mvd/vfs/s3fs/s3fstest"
)

// TestViewRebuildOnS3Multipart: a view rebuilt on S3 writes its data file
// with a multipart upload once it is larger than a part (a 64 KiB part
// here, 16 MiB by default), completed with If-None-Match: *; every
// manifest the rebuild publishes is a PUT with If-None-Match: *; the view
// equals its definition.
func TestViewRebuildOnS3Multipart(t *testing.T) {
	ctx := context.Background()
	srv := s3fstest.Start(t, "bkt")
	newGoSource(t, srv.FS(t, "bkt"), "pre/db", "src", 20000)
	db := openDBWith(t, "s3://bkt/pre/db", Options{StorageOptions: srv.StorageOptions()})
	db.fs.(*s3fs.FS).SetPartSize(64 << 10)
	v := must[*View](t)(db.CreateView(ctx, "big", "src", Definition{}))
	srv.Reset()
	if r := must[*Result](t)(v.Refresh(ctx, RefreshOptions{Full: true})); r.RowsWritten != 20000 {
		t.Fatalf("rebuild wrote %d rows, want 20000", r.RowsWritten)
	}
	var parts, completed, manifests int
	var uploaded int64
	for _, r := range srv.Requests() {
		if !strings.HasPrefix(r.Key, "pre/db/big.lance/") {
			continue
		}
		switch k := r.Kind(); {
		case k == "PART" && strings.Contains(r.Key, "/data/"):
			parts++
			uploaded += r.BytesIn
		case k == "COMPLETE-MULTIPART":
			completed++
			if r.IfNoneMatch != "*" {
				t.Errorf("multipart upload completed without If-None-Match: *: %+v", r)
			}
		case k == "PUT" && strings.HasSuffix(r.Key, ".manifest"):
			manifests++
			if r.IfNoneMatch != "*" {
				t.Errorf("manifest PUT without If-None-Match: *: %+v", r)
			}
		case k == "PUT" && strings.Contains(r.Key, "/data/"):
			t.Errorf("a data file of %d bytes in one PUT, not in parts: %s", r.BytesIn, r.Key)
		}
	}
	if parts < 2 || completed < 1 || manifests < 1 {
		t.Fatalf("rebuild: %d parts, %d multipart uploads completed, %d manifests; want parts and a manifest", parts, completed, manifests)
	}
	t.Logf("rebuild of 20000 rows: %d bytes of data in %d parts, %d uploads, %d manifest PUTs", uploaded, parts, completed, manifests)
	checkView(t, db, "big")
}

// TestViewCommitConflictOnS3: when a rival refresh commits the view's
// next version while a refresh's conditional manifest PUT is in flight,
// S3 answers that PUT 412 and the refresh fails with matview's conflict
// (errors.Is(err, ErrConflict), a *ConflictError naming the rival's
// version), as a lost link race does on local disk; the view is the
// rival's, right.
func TestViewCommitConflictOnS3(t *testing.T) {
	ctx := context.Background()
	srv := s3fstest.Start(t, "bkt")
	src := newGoSource(t, srv.FS(t, "bkt"), "pre/db", "src", 100)
	opts := Options{StorageOptions: srv.StorageOptions()}
	dbA, dbB := openDBWith(t, "s3://bkt/pre/db", opts), openDBWith(t, "s3://bkt/pre/db", opts)
	must[*View](t)(dbA.CreateView(ctx, "v", "src", Definition{Where: "amount > 30"}))
	must[*Result](t)(must[*View](t)(dbA.OpenView(ctx, "v")).Refresh(ctx, RefreshOptions{}))
	vA := must[*View](t)(dbA.OpenView(ctx, "v"))
	vB := must[*View](t)(dbB.OpenView(ctx, "v"))
	src.append(t, 100, 150)

	var held atomic.Bool
	var rival *Result
	var rivalErr error
	srv.BeforeRequest(func(r *http.Request) {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/v.lance/_versions/") &&
			strings.HasSuffix(r.URL.Path, ".manifest") && held.CompareAndSwap(false, true) {
			rival, rivalErr = vB.Refresh(ctx, RefreshOptions{}) // commits before this PUT is served
		}
	})
	_, err := vA.Refresh(ctx, RefreshOptions{})
	srv.BeforeRequest(nil)
	if rivalErr != nil || rival == nil || rival.Mode == ModeNoOp {
		t.Fatalf("the rival refresh: %+v, %v; want a commit", rival, rivalErr)
	}
	var ce *ConflictError
	if !errors.Is(err, ErrConflict) || !errors.As(err, &ce) || ce.Version != rival.Version {
		t.Fatalf("refresh whose manifest PUT lost: %v; want ErrConflict naming version %d", err, rival.Version)
	}
	refused := 0
	for _, r := range srv.Requests() {
		if r.Kind() == "PUT" && r.Status == http.StatusPreconditionFailed && strings.HasSuffix(r.Key, ".manifest") {
			refused++
		}
	}
	if refused != 1 {
		t.Fatalf("%d manifest PUTs answered 412, want 1", refused)
	}
	checkView(t, dbA, "v")
}
