package lance_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/s3fs/s3fstest"
)

// putTree copies the files under dir to the objects under prefix.
func putTree(t *testing.T, o vfs.ObjectStore, dir, prefix string) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return o.PutIfAbsent(prefix+"/"+filepath.ToSlash(rel), b)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCommittedFixturesOnS3 is TestCommittedFixtures on S3: every table
// LanceDB wrote for the committed fixtures (V1 and V2 manifest names,
// stable and plain row ids, file formats 2.0 to 2.2), its bytes put on an
// S3 endpoint, reads as LanceDB's answers say, every version, every
// change set.
func TestCommittedFixturesOnS3(t *testing.T) {
	dir := lancedbtest.FixturesDir(t)
	matches, err := filepath.Glob(filepath.Join(dir, "*.answers.json"))
	if err != nil || len(matches) == 0 {
		t.Fatalf("no committed fixtures in %s (%v)", dir, err)
	}
	srv := s3fstest.Start(t, "fx")
	fsys := srv.FS(t, "fx")
	for _, answersPath := range matches {
		name := strings.TrimSuffix(filepath.Base(answersPath), ".answers.json")
		t.Run(name, func(t *testing.T) {
			root := "db/" + name + ".lance"
			putTree(t, fsys, filepath.Join(dir, name+".lance"), root)
			checkFixtureOn(t, dir, name, fsys, root)
		})
	}
}
