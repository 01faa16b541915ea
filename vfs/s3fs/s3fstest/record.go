package s3fstest

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Request is one request the server answered, as a test counts it.
type Request struct {
	Method string
	Key    string     // the object key (or prefix for a listing), without the bucket
	Query  url.Values // e.g. list-type, max-keys, uploadId, partNumber
	// IfNoneMatch and Range are the request's headers of those names.
	IfNoneMatch, Range string
	Status             int
	// BytesIn is the request body's length; BytesOut the response body's.
	BytesIn, BytesOut int64
}

// Kind names the S3 operation: LIST, HEAD, GET, PUT, DELETE, or for a
// multipart upload CREATE-MULTIPART, PART, COMPLETE-MULTIPART, ABORT-MULTIPART.
func (r Request) Kind() string {
	switch {
	case r.Method == http.MethodGet && (r.Query.Has("list-type") || r.Query.Has("prefix") || r.Query.Has("delimiter")):
		return "LIST"
	case r.Method == http.MethodPost && r.Query.Has("uploads"):
		return "CREATE-MULTIPART"
	case r.Method == http.MethodPut && r.Query.Has("partNumber"):
		return "PART"
	case r.Method == http.MethodPost && r.Query.Has("uploadId"):
		return "COMPLETE-MULTIPART"
	case r.Method == http.MethodDelete && r.Query.Has("uploadId"):
		return "ABORT-MULTIPART"
	}
	return r.Method
}

// recorder keeps every request the server answered.
type recorder struct {
	mu   sync.Mutex
	reqs []*Request
	hook func(*http.Request)
}

// wrap records each request before it is served and counts its response
// as it is written, before any byte reaches the client: a client that
// has its answer finds the request recorded.
func (rec *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		hook := rec.hook
		rec.mu.Unlock()
		if hook != nil {
			hook(r)
		}
		// Path-style: /BUCKET/KEY, or /BUCKET?prefix=… for a listing.
		_, k, hasKey := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if !hasKey || k == "" {
			k = r.URL.Query().Get("prefix")
		}
		req := &Request{
			Method: r.Method, Key: k, Query: r.URL.Query(), IfNoneMatch: r.Header.Get("If-None-Match"),
			Range: r.Header.Get("Range"), Status: http.StatusOK, BytesIn: max(r.ContentLength, 0),
		}
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, req)
		rec.mu.Unlock()
		h.ServeHTTP(&countingWriter{ResponseWriter: w, rec: rec, req: req}, r)
	})
}

type countingWriter struct {
	http.ResponseWriter
	rec *recorder
	req *Request
}

func (c *countingWriter) WriteHeader(status int) {
	c.rec.mu.Lock()
	c.req.Status = status
	c.rec.mu.Unlock()
	c.ResponseWriter.WriteHeader(status)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.rec.mu.Lock()
	c.req.BytesOut += int64(len(p))
	c.rec.mu.Unlock()
	return c.ResponseWriter.Write(p)
}

// Requests returns the requests answered since the server started or
// since the last Reset, oldest first.
func (s *Server) Requests() []Request {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	out := make([]Request, len(s.rec.reqs))
	for i, r := range s.rec.reqs {
		out[i] = *r
	}
	return out
}

// Reset forgets the requests recorded so far.
func (s *Server) Reset() {
	s.rec.mu.Lock()
	s.rec.reqs = nil
	s.rec.mu.Unlock()
}

// Count returns how many of the requests recorded are of kind (see
// Request.Kind) and have a key starting with prefix.
func (s *Server) Count(kind, prefix string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Kind() == kind && strings.HasPrefix(r.Key, prefix) {
			n++
		}
	}
	return n
}

// BeforeRequest makes f run before the server serves each request (nil:
// nothing), on the request's own goroutine: a test holds a request there
// to order it against others, e.g. to make a commit's conditional PUT
// arrive after a rival's.
func (s *Server) BeforeRequest(f func(*http.Request)) {
	s.rec.mu.Lock()
	s.rec.hook = f
	s.rec.mu.Unlock()
}
