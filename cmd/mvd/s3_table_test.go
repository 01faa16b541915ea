package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/vfs/s3fs/s3fstest"
)

// TestS3TableCommands: every `mvd table` subcommand prints for an
// s3:// table what it prints for the same table on local disk, and
// `mvd table copy` copies local → S3, S3 → local and S3 → S3 (the copies
// hold the source's rows), refusing a destination that is a table.
func TestS3TableCommands(t *testing.T) {
	table, _ := fixture(t, "history_stable_v21")
	srv := s3fstest.Start(t, "bkt")
	store := srv.FS(t, "bkt")
	err := filepath.Walk(table, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(table, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return store.Put("db/src.lance/"+filepath.ToSlash(rel), b)
	})
	if err != nil {
		t.Fatal(err)
	}
	var so []string
	for k, v := range srv.StorageOptions() {
		so = append(so, "--storage-option", k+"="+v)
	}
	run := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(append(args, so...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	const remote = "s3://bkt/db/src.lance"
	same := func(local, s3 string, args ...string) {
		t.Helper()
		l, r := run(append([]string{"table", args[0], local}, args[1:]...)...), run(append([]string{"table", args[0], s3}, args[1:]...)...)
		if l != r || l == "" {
			t.Fatalf("table %v:\nlocal %q\n   s3 %q", args, l, r)
		}
	}
	same(table, remote, "versions", "--json")
	same(table, remote, "versions")
	same(table, remote, "schema", "--json")
	same(table, remote, "schema", "--version", "1")
	same(table, remote, "changes", "--from", "1", "--to", "3", "--json")
	same(table, remote, "scan")
	same(table, remote, "scan", "--version", "2", "--with-row-ids", "--format", "table")
	same(table, remote, "scan", "--select", "id, upper(name) AS shout", "--where", "id > 3")
	same(table, remote, "scan", "--format", "arrow", "--limit", "3")

	dir := t.TempDir()
	toS3 := "s3://bkt/copies/up.lance"
	back := filepath.Join(dir, "back.lance")
	across := "s3://bkt/copies/across.lance"
	for _, c := range [][2]string{{table, toS3}, {toS3, back}, {remote, across}} {
		if out := run("table", "copy", c[0], c[1]); !strings.HasPrefix(out, "copied ") {
			t.Fatalf("copy %s %s: %q", c[0], c[1], out)
		}
	}
	same(table, toS3, "scan")
	same(table, back, "scan")
	same(toS3, across, "scan")
	if code, _, errOut := runCLI(append([]string{"table", "copy", table, toS3}, so...)...); code != 1 || !strings.Contains(errOut, "already exists") {
		t.Fatalf("copy onto an S3 table: exit %d: %s", code, errOut)
	}
}
