package matview

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/vfs/s3fs/s3fstest"
)

// s3Scenarios are the scenarios TestScenariosOnS3 runs in `make test`:
// appends, deletes and updates read incrementally, an overwrite rebuild,
// a view over a view, a capped view, LanceDB interop (about 10 s under
// -race, within make test's budget). MVD_S3_ALL=1 (make bench) runs every
// file.
var s3Scenarios = []string{
	"basics", "interop", "overwrite-rebuild", "view-over-view", "limit-update",
}

// TestScenariosOnS3 runs the scenarios of testdata/scenarios as
// TestScenarios does, with the database on an S3 endpoint (gofakes3 on
// 127.0.0.1): LanceDB writes the sources there through its storageOptions
// (aws_endpoint, allow_http, keys, region), mvd opens s3://BUCKET/PREFIX
// with the same settings as storage options, and LanceDB checks every
// view mvd refreshes on it.
func TestScenariosOnS3(t *testing.T) {
	lancedbtest.Require(t)
	files, err := filepath.Glob(filepath.Join(lancedbtest.ScenariosDir(t), "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files: %v", err)
	}
	all := os.Getenv("MVD_S3_ALL") != ""
	ran := 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		if !all && !slices.Contains(s3Scenarios, name) {
			continue
		}
		ran++
		t.Run(name, func(t *testing.T) {
			srv := s3fstest.Start(t, "bkt")
			local := t.TempDir()
			d := lancedbtest.StartDriver(t, local)
			if err := d.ConnectURI("s3://bkt/db", srv.StorageOptions()); err != nil {
				t.Fatal(err)
			}
			db := openDBWith(t, "s3://bkt/db", Options{StorageOptions: srv.StorageOptions()})
			lancedbtest.RunScenario(t, f, d, mvdEngine{d: d, db: db})
			if left, _ := os.ReadDir(local); len(left) > 0 || srv.Count("PUT", "db/") == 0 {
				t.Fatalf("the database is not on S3: %d objects put under db/, %d entries on local disk", srv.Count("PUT", "db/"), len(left))
			}
			for _, r := range srv.Requests() {
				if r.Kind() == "PUT" && strings.HasSuffix(r.Key, ".manifest") && r.IfNoneMatch != "*" {
					t.Errorf("manifest PUT without If-None-Match: *: %s", r.Key)
				}
			}
		})
	}
	if ran < len(s3Scenarios) {
		t.Fatalf("ran %d scenarios on S3, want at least the %d named", ran, len(s3Scenarios))
	}
}

// TestDifferentialOnS3 is TestDifferentialOpSequences with the database
// on an S3 endpoint (LanceDB writing the sources through its
// storageOptions, mvd reading them and writing its views through s3://),
// on a sample of sequences: in make test one sequence of ops that write
// data files (an append, an upsert: updates and inserts), a compaction
// and deletion files (about 6 s under -race), with MVD_S3_ALL=1 every
// sequence make test runs on local disk.
func TestDifferentialOnS3(t *testing.T) {
	lancedbtest.Require(t)
	seqs := [][]lancedbtest.OpKind{{lancedbtest.Append, lancedbtest.MergeUpsert, lancedbtest.Compact, lancedbtest.Delete}}
	if os.Getenv("MVD_S3_ALL") != "" {
		seqs = diffSequences()
	}
	srv := s3fstest.Start(t, "bkt")
	d := lancedbtest.StartDriver(t, t.TempDir())
	if err := d.ConnectURI("s3://bkt/db", srv.StorageOptions()); err != nil {
		t.Fatal(err)
	}
	runDifferential(t, d, openDBWith(t, "s3://bkt/db", Options{StorageOptions: srv.StorageOptions()}), seqs)
}
