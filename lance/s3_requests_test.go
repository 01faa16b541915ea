package lance_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/s3fs/s3fstest"
)

// s3Table creates a table at root on fsys with the manifest naming asked
// for and commits appends until its latest version is versions.
func s3Table(t *testing.T, fsys vfs.FS, root string, v1 bool, versions int) *lance.Table {
	t.Helper()
	ctx := context.Background()
	schema, err := lance.NewSchemaFromArrow(baseSchema)
	if err != nil {
		t.Fatal(err)
	}
	tbl, _, err := lance.Create(ctx, fsys, root, lance.CreateOptions{Schema: schema, V1ManifestNames: v1})
	if err != nil {
		t.Fatal(err)
	}
	appendVersions(t, fsys, tbl, versions-1)
	return tbl
}

func appendVersions(t *testing.T, fsys vfs.FS, tbl *lance.Table, n int) {
	t.Helper()
	ctx := context.Background()
	for range n {
		snap, err := tbl.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		id := int64(snap.Version) * 10
		fr, err := datawriter.WriteFragments(fsys, tbl.Root(), snap.Schema, snap.DataFileVersion, []arrow.RecordBatch{baseRecord(idRange(id, id+3))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.Commit(ctx, snap, &lance.Commit{Fragments: fr}); err != nil {
			t.Fatal(err)
		}
	}
}

// requestsTo summarises the requests under prefix: "LIST 1, GET 1".
func requestsTo(srv *s3fstest.Server, prefix string) map[string]int {
	out := map[string]int{}
	for _, r := range srv.Requests() {
		if strings.HasPrefix(r.Key, prefix) {
			out[r.Kind()]++
		}
	}
	return out
}

// TestLatestOnS3IsOneListing: on S3 the latest version of a table with V2
// manifest names (newest first in key order) is found by one LIST of
// _versions/ — opening costs that one request, and a handle ten versions
// behind catches up with one LIST, not a HEAD per version; a table with
// V1 names is listed whole and still yields its newest version, though
// "10.manifest" sorts before "9.manifest".
func TestLatestOnS3IsOneListing(t *testing.T) {
	ctx := context.Background()
	srv := s3fstest.Start(t, "b")
	fsys := srv.FS(t, "b")
	const root = "db/v2.lance"
	writer := s3Table(t, fsys, root, false, 2)

	srv.Reset()
	reader, err := lance.Open(ctx, fsys, root)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests(); len(got) != 1 || got[0].Kind() != "LIST" {
		t.Fatalf("Open made %d requests (%v), want one LIST", len(got), requestsTo(srv, ""))
	}
	if v, err := reader.LatestVersion(ctx); err != nil || v != 2 {
		t.Fatalf("latest %d, %v; want 2", v, err)
	}
	appendVersions(t, fsys, writer, 10)
	srv.Reset()
	snap, err := reader.Latest(ctx)
	if err != nil || snap.Version != 12 {
		t.Fatalf("latest %v, %v; want version 12", snap, err)
	}
	got := requestsTo(srv, root+"/_versions/")
	if got["LIST"] != 1 || got["HEAD"] != 0 || got["GET"] != 1 || len(got) != 2 {
		t.Fatalf("a handle 10 versions behind: requests to _versions/ %v; want one LIST and the manifest's GET", got)
	}
	for _, r := range srv.Requests() {
		if r.Kind() == "LIST" && r.Query.Get("max-keys") == "" {
			t.Fatalf("the latest of a V2 table listed _versions/ whole: %+v", r)
		}
	}

	// An object sorting before the newest manifest costs a whole listing,
	// not a wrong answer.
	if err := fsys.Put(root+"/_versions/!stray", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if v, err := reader.LatestVersion(ctx); err != nil || v != 12 {
		t.Fatalf("with a stray object first: latest %d, %v; want 12", v, err)
	}

	const v1root = "db/v1.lance"
	s3Table(t, fsys, v1root, true, 12)
	srv.Reset()
	old, err := lance.Open(ctx, fsys, v1root)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := old.LatestVersion(ctx); err != nil || v != 12 {
		t.Fatalf("V1 table: latest %d, %v; want 12", v, err)
	}
	whole := 0
	for _, r := range srv.Requests() {
		if r.Kind() == "LIST" && r.Query.Get("max-keys") == "" {
			whole++
		}
	}
	if whole == 0 {
		t.Fatalf("V1 table: no whole listing of _versions/ (%v)", requestsTo(srv, v1root))
	}
	t.Logf("requests: Open + Latest of a V1 table %v", requestsTo(srv, v1root))
}

// TestCommitOnS3Requests: every manifest a commit writes is one PUT with
// If-None-Match: * (the conditional PUT that makes the commit atomic),
// and neither a commit nor a checkout of a missing version lists a
// directory named like a manifest.
func TestCommitOnS3Requests(t *testing.T) {
	srv := s3fstest.Start(t, "b")
	fsys := srv.FS(t, "b")
	const root = "db/c.lance"
	tbl := s3Table(t, fsys, root, false, 1)
	appendVersions(t, fsys, tbl, 5)
	srv.Reset()
	appendVersions(t, fsys, tbl, 1)
	manifests := 0
	for _, r := range srv.Requests() {
		if r.Method == "PUT" && strings.HasSuffix(r.Key, ".manifest") {
			manifests++
			if r.IfNoneMatch != "*" {
				t.Fatalf("manifest PUT without If-None-Match: *: %+v", r)
			}
		}
	}
	if manifests != 1 {
		t.Fatalf("one commit PUT %d manifests, want 1", manifests)
	}
	// A version looked for and missing is a HEAD per naming scheme, not
	// also a listing for a directory of that name.
	if _, err := tbl.Checkout(context.Background(), 99); !errors.Is(err, lance.ErrVersionNotFound) {
		t.Fatalf("checkout of a missing version: %v; want ErrVersionNotFound", err)
	}
	for _, r := range srv.Requests() {
		if r.Kind() == "LIST" && strings.HasSuffix(r.Key, ".manifest/") {
			t.Fatalf("a manifest was looked for as a directory too: %+v", r)
		}
	}
	t.Logf("requests of one append commit (latest, data file, manifest, hint): %v", fmt.Sprint(requestsTo(srv, root)))
}
