package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/vfs/s3fs/s3fstest"
)

// TestS3Database: view, sql and table commands on --db s3://BUCKET/PREFIX
// (settings by --storage-option) print what they print on the same
// database on local disk; serve and other schemes are refused.
func TestS3Database(t *testing.T) {
	local := viewDB(t)
	srv := s3fstest.Start(t, "bkt")
	store := srv.FS(t, "bkt")
	err := filepath.Walk(local, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(local, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return store.Put("pre/db/"+filepath.ToSlash(rel), b)
	})
	if err != nil {
		t.Fatal(err)
	}
	var so []string
	for k, v := range srv.StorageOptions() {
		so = append(so, "--storage-option", k+"="+v)
	}
	run := func(db string, args ...string) string {
		t.Helper()
		if db != local {
			args = append(args, so...)
		}
		code, out, errOut := runCLI(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	for _, db := range []string{local, "s3://bkt/pre/db"} {
		run(db, "view", "create", "--db", db, "v", "--source", "src", "--select", "id, upper(name) AS shout", "--where", "id > 100")
	}
	same := func(args ...string) {
		t.Helper()
		sub := func(db string) []string {
			out := make([]string, len(args))
			for i, a := range args {
				if a == "DB" {
					a = db
				}
				if a == "TABLE" {
					a = db + "/v.lance"
				}
				out[i] = a
			}
			return out
		}
		l := run(local, sub(local)...)
		r := run("s3", sub("s3://bkt/pre/db")...)
		if l != r {
			t.Fatalf("%v:\nlocal %q\n   s3 %q", args, l, r)
		}
	}
	same("view", "refresh", "--db", "DB", "v", "--json")
	same("view", "list", "--db", "DB", "--json")
	same("sql", "--db", "DB", "--json", "REFRESH MATERIALIZED VIEW v")
	same("table", "scan", "TABLE", "--columns", "id,shout")
	same("view", "drop", "--db", "DB", "v")
	same("view", "list", "--db", "DB", "--json")
	if code, _, errOut := runCLI("serve", "--db", "s3://bkt/pre/db", "--watch", "fsnotify", "--check-config"); code != 2 || !strings.Contains(errOut, "object store") {
		t.Fatalf("serve --watch fsnotify on s3://: exit %d, %q; want a usage error", code, errOut)
	}
	if code, _, errOut := runCLI("serve", "--db", "gs://bkt/pre/db", "--check-config"); code != 1 || !strings.Contains(errOut, "s3://BUCKET/PREFIX only") {
		t.Fatalf("serve on gs://: exit %d, %q; want a refusal", code, errOut)
	}
	if code, _, errOut := runCLI("view", "list", "--db", "s3://bkt/pre/db", "--storage-option", "nokey"); code != 2 {
		t.Fatalf("a malformed --storage-option: exit %d (%s), want 2", code, errOut)
	}
}
