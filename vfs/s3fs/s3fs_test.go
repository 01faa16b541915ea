package s3fs_test

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"

	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/s3fs"
	"github.com/mvd-project/mvd/vfs/s3fs/s3fstest"
	"github.com/mvd-project/mvd/vfs/vfstest"
)

// TestConformance runs the store contract local disk passes (vfs/vfstest)
// on S3.
func TestConformance(t *testing.T) {
	srv := s3fstest.Start(t, "b")
	vfstest.Conformance(t, srv.FS(t, "b"), "db/c")
}

// TestRacingPutIfAbsent: of many writers publishing one manifest with a
// conditional PUT, exactly one wins and every other gets fs.ErrExist; the
// object holds the winner's bytes.
func TestRacingPutIfAbsent(t *testing.T) {
	srv := s3fstest.Start(t, "b")
	f := srv.FS(t, "b")
	const n = 16
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = f.PutIfAbsent("t.lance/_versions/1.manifest", fmt.Appendf(nil, "writer %d", i)) })
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both won", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, fs.ErrExist):
			t.Fatalf("writer %d: %v; want fs.ErrExist", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer won")
	}
	got, err := vfs.ReadFile(f, "t.lance/_versions/1.manifest")
	if err != nil || string(got) != fmt.Sprintf("writer %d", winner) {
		t.Fatalf("manifest = %q, %v; want writer %d's", got, err, winner)
	}
}

// TestMultipartCreate: a file larger than a part is uploaded in parts and
// reads back whole; Create still refuses the name afterwards.
func TestMultipartCreate(t *testing.T) {
	srv := s3fstest.Start(t, "b")
	f := srv.FS(t, "b")
	const part = 64 << 10
	f.SetPartSize(part)
	body := strings.Repeat("abcdefgh", (2*part+part/2)/8)
	vfstest.WriteFile(t, f, "big/data.lance", body)
	got, err := vfs.ReadFile(f, "big/data.lance")
	if err != nil || string(got) != body {
		t.Fatalf("read back %d bytes, %v; want %d", len(got), err, len(body))
	}
	if _, err := f.Create("big/data.lance"); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create over it: %v; want fs.ErrExist", err)
	}
}

// TestSettings: storage options win over the environment, keys are
// LanceDB's, an http endpoint needs allow_http, and unknown keys fail.
func TestSettings(t *testing.T) {
	env := map[string]string{"AWS_ENDPOINT": "http://env:9000", "AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "envkey", "AWS_ALLOW_HTTP": "true"}
	o, err := s3fs.Settings(func(k string) string { return env[k] }, map[string]string{"aws_region": "us-west-2", "AWS_SECRET_ACCESS_KEY": "s"})
	if err != nil {
		t.Fatal(err)
	}
	want := s3fs.Options{Endpoint: "http://env:9000", Region: "us-west-2", AccessKeyID: "envkey", SecretAccessKey: "s", AllowHTTP: true}
	if o != want {
		t.Fatalf("Settings = %+v, want %+v", o, want)
	}
	if _, err := s3fs.Settings(func(string) string { return "" }, map[string]string{"aws_regoin": "x"}); !errors.Is(err, s3fs.ErrBadOption) {
		t.Fatalf("unknown key: %v; want ErrBadOption", err)
	}
	if _, err := s3fs.New(t.Context(), "b", s3fs.Options{Endpoint: "http://127.0.0.1:1", AccessKeyID: "k"}); !errors.Is(err, s3fs.ErrBadOption) {
		t.Fatalf("http endpoint without allow_http: %v; want ErrBadOption", err)
	}
	b, p, err := s3fs.ParseURI("s3://bucket/a/b/")
	if err != nil || b != "bucket" || p != "a/b" {
		t.Fatalf("ParseURI = %q, %q, %v", b, p, err)
	}
}

// TestCreateFreshAndPrefixDirs: CreateFresh makes no request before the
// upload and still refuses, at Close, a name an object already has;
// MkdirAllDurable of a prefix asks the store nothing.
func TestCreateFreshAndPrefixDirs(t *testing.T) {
	srv := s3fstest.Start(t, "b")
	f := srv.FS(t, "b")
	if err := f.Put("d/taken", []byte("old")); err != nil {
		t.Fatal(err)
	}
	srv.Reset()
	if err := vfs.MkdirAllDurable(f, "d/new/dir"); err != nil {
		t.Fatal(err)
	}
	w, err := vfs.CreateFresh(f, "d/taken")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("MkdirAllDurable and CreateFresh made %d requests, want none", n)
	}
	if _, err := w.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("CreateFresh over an existing object: Close = %v, want fs.ErrExist", err)
	}
	if b, err := f.ReadWhole("d/taken"); err != nil || string(b) != "old" {
		t.Fatalf("the existing object: %q, %v; want it untouched", b, err)
	}
}
