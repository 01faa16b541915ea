package matview

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs/s3fs/s3fstest"
)

// TestIncrementalRefreshOnS3Requests lists the S3 requests of one
// incremental refresh of a view kept open (as mvd serve keeps it) after
// a one-row LanceDB append to its source: each is a round trip on the
// path from a source commit to the view's, so none may be one the
// handle can do without. (It made 10: a Stat of the view's data
// directory, HEAD and LIST, a HEAD before the data file's PUT and a
// HEAD of the source version the view is at.)
func TestIncrementalRefreshOnS3Requests(t *testing.T) {
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
	must[uint64](t)(d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 100, 0)))
	db := openDBWith(t, "s3://bkt/db", Options{})
	v := must[*View](t)(db.CreateView(ctx, "mv", "src", Definition{}))
	must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	must[uint64](t)(d.Add("src", lancedbtest.SourceRows(100, 101, 0)))
	must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	must[uint64](t)(d.Add("src", lancedbtest.SourceRows(101, 102, 0)))

	srv.Reset()
	r := must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	if r.Mode != ModeIncremental {
		t.Fatalf("refresh after a one-row append: mode %q, want incremental", r.Mode)
	}
	// The version hint is written in the background after the commit
	// (not on the refresh's path): let it finish, and count the refresh's
	// requests up to its manifest PUT, the commit.
	if err := v.Table().Idle(); err != nil {
		t.Fatal(err)
	}
	all := srv.Requests()
	reqs := all
	for i, q := range all {
		if q.Kind() == "PUT" && strings.HasPrefix(q.Key, "db/mv.lance/_versions/") && strings.HasSuffix(q.Key, ".manifest") {
			reqs = all[:i+1]
			break
		}
	}
	// The daemon reads the version just committed (its watermark's
	// source commit time, for the notification's lag): the handle that
	// committed it has it, without a request.
	if s := must[*lance.Snapshot](t)(v.Table().Checkout(ctx, r.Version)); s.Version != r.Version {
		t.Fatalf("checkout of version %d gave %d", r.Version, s.Version)
	}
	if after := srv.Requests()[len(all):]; len(after) != 0 {
		t.Errorf("the checkout of the version just committed made %d requests", len(after))
	}
	kinds := map[string]int{}
	var lines []string
	for _, r := range reqs {
		kinds[r.Kind()]++
		lines = append(lines, fmt.Sprintf("%s %s %s", r.Kind(), r.Key, r.Query.Encode()))
	}
	t.Logf("%d requests %v:\n%s", len(reqs), kinds, strings.Join(lines, "\n"))
	for _, r := range reqs {
		// The view's data directory is a prefix: nothing to stat or
		// create; a data file's random name needs no HEAD before its PUT.
		if strings.HasPrefix(r.Key, "db/mv.lance/data") && r.Kind() != "PUT" {
			t.Errorf("%s %s: a request on the view's data directory other than the data file's PUT", r.Kind(), r.Key)
		}
	}
	// The view's latest (LIST), the source's latest (LIST, GET; the
	// source version the view is at is among the keys listed, no HEAD),
	// the appended row (GET), the view's data file and manifest (PUT,
	// PUT with If-None-Match: *); the checkout of the view's new version,
	// none.
	const want = 6
	if kinds["HEAD"] != 0 {
		t.Errorf("%d HEADs; the source version the view is at was listed with the latest", kinds["HEAD"])
	}
	if len(reqs) > want {
		t.Errorf("one incremental refresh made %d S3 requests, want at most %d", len(reqs), want)
	}
	checkView(t, db, "mv")
}
