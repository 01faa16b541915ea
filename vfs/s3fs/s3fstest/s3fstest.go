// Package s3fstest starts an in-process S3-compatible server (gofakes3,
// in memory, which enforces If-None-Match: * atomically) on 127.0.0.1 for
// tests of code that stores tables on S3.
package s3fstest

import (
	"net/http/httptest"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/mvd-project/mvd/vfs/s3fs"
)

// Credentials the server accepts (gofakes3 does not check them).
const (
	AccessKeyID     = "mvdtest"
	SecretAccessKey = "mvdtestsecret"
)

// Server is a running S3 endpoint.
type Server struct {
	// Endpoint is the server's http:// URL.
	Endpoint string

	rec *recorder
}

// Start starts a server with the bucket created; it stops with the test.
// It records every request it answers (Requests), so that tests count
// what an operation cost.
func Start(t testing.TB, bucket string) *Server {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	srv := httptest.NewServer(rec.wrap(gofakes3.New(backend).Server()))
	t.Cleanup(srv.Close)
	return &Server{Endpoint: srv.URL, rec: rec}
}

// StorageOptions are the storage options (LanceDB's keys) that reach the
// server.
func (s *Server) StorageOptions() map[string]string {
	return map[string]string{
		"aws_endpoint": s.Endpoint, "allow_http": "true", "aws_region": "us-east-1",
		"aws_access_key_id": AccessKeyID, "aws_secret_access_key": SecretAccessKey,
	}
}

// FS returns an s3fs.FS of bucket on the server.
func (s *Server) FS(t testing.TB, bucket string) *s3fs.FS {
	t.Helper()
	o, err := s3fs.Settings(func(string) string { return "" }, s.StorageOptions())
	if err != nil {
		t.Fatal(err)
	}
	f, err := s3fs.New(t.Context(), bucket, o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
