package matview

import (
	"context"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/vfs/s3fs/s3fstest"
)

// TestLanceDBInteropOnS3: on one S3 endpoint, configured through the
// environment LanceDB's object_store and mvd both read, mvd makes and
// refreshes a view over a table LanceDB wrote (equal to the definition
// evaluated on it), and LanceDB opens that view, sees the same rows and
// refreshes it after a LanceDB commit.
func TestLanceDBInteropOnS3(t *testing.T) {
	lancedbtest.Require(t)
	ctx := context.Background()
	srv := s3fstest.Start(t, "bkt")
	t.Setenv("AWS_ENDPOINT", srv.Endpoint)
	t.Setenv("AWS_ALLOW_HTTP", "true")
	t.Setenv("AWS_ACCESS_KEY_ID", s3fstest.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3fstest.SecretAccessKey)
	t.Setenv("AWS_REGION", "us-east-1")
	d := lancedbtest.StartDriver(t, t.TempDir())
	if err := d.Call("connect", map[string]any{"dir": "s3://bkt/db"}, nil); err != nil {
		t.Fatal(err)
	}
	must[uint64](t)(d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 20, 0)))
	db := openDBWith(t, "s3://bkt/db", Options{})
	v := must[*View](t)(db.CreateView(ctx, "mv", "src", Definition{Where: "id % 3 = 0"}))
	must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	checkView(t, db, "mv")
	must[uint64](t)(d.Add("src", lancedbtest.SourceRows(20, 40, 0)))
	must[uint64](t)(d.Delete("src", "id < 6"))
	if r := must[*Result](t)(v.Refresh(ctx, RefreshOptions{})); r.Mode != "incremental" {
		t.Fatalf("refresh after LanceDB's commits: mode %q, want incremental", r.Mode)
	}
	checkView(t, db, "mv")
	n := must[uint64](t)(mustLatest(t, v).CountRows(ctx))
	if got := must[uint64](t)(d.Count("mv", 0)); got != n {
		t.Fatalf("LanceDB counts %d rows in mvd's view, mvd %d", got, n)
	}
	if _, err := d.ViewDefinition("mv"); err != nil {
		t.Fatalf("LanceDB cannot open mvd's view: %v", err)
	}
	must[uint64](t)(d.Add("src", lancedbtest.SourceRows(40, 50, 0)))
	if _, err := d.Refresh("mv", lancedbtest.RefreshOptions{}); err != nil {
		t.Fatalf("LanceDB refreshing mvd's view: %v", err)
	}
	must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	checkView(t, db, "mv")
}
