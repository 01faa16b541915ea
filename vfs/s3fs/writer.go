package s3fs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/mvd-project/mvd/vfs"
)

// Create implements vfs.FS: it fails with fs.ErrExist if name exists
// (HEAD); the returned file buffers what is written and uploads it on
// Sync or Close, with If-None-Match: * so that a writer that raced in
// between is not overwritten. Above PartSize the upload is multipart,
// one part each time a part's worth is buffered.
func (f *FS) Create(name string) (vfs.WritableFile, error) {
	k := key(name)
	_, err := f.client.HeadObject(ctx(), &s3.HeadObjectInput{Bucket: &f.bucket, Key: &k})
	if err == nil {
		return nil, &fs.PathError{Op: "create", Path: "s3://" + f.bucket + "/" + k, Err: fs.ErrExist}
	}
	if !isStatus(err, http.StatusNotFound, "NotFound", "NoSuchKey") {
		return nil, f.pathErr("create", name, err)
	}
	return &writer{fs: f, name: name, key: k}, nil
}

// CreateFresh implements vfs.FreshCreator: Create without the HEAD; an
// object already under name fails Sync or Close with fs.ErrExist (the
// upload's If-None-Match: *).
func (f *FS) CreateFresh(name string) (vfs.WritableFile, error) {
	return &writer{fs: f, name: name, key: key(name)}, nil
}

// writer is a file being written (see Create). It is used by one
// goroutine at a time, as an *os.File being written is.
type writer struct {
	fs       *FS
	name     string
	key      string
	buf      bytes.Buffer
	uploadID *string // set once a multipart upload started
	parts    []types.CompletedPart
	done     bool  // uploaded (or failed for good)
	err      error // the upload's error, returned again by Sync and Close
}

// Write implements io.Writer; a part is uploaded each time more than a
// part's worth is buffered.
func (w *writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, &fs.PathError{Op: "write", Path: w.name, Err: errors.New("write after the object was uploaded")}
	}
	n, _ := w.buf.Write(p)
	for w.buf.Len() > w.fs.partSize {
		if err := w.uploadPart(w.buf.Next(w.fs.partSize)); err != nil {
			w.fail(err)
			return n, err
		}
	}
	return n, nil
}

func (w *writer) uploadPart(data []byte) error {
	if w.uploadID == nil {
		out, err := w.fs.client.CreateMultipartUpload(ctx(), &s3.CreateMultipartUploadInput{Bucket: &w.fs.bucket, Key: &w.key})
		if err != nil {
			return w.fs.pathErr("create multipart upload", w.name, err)
		}
		w.uploadID = out.UploadId
	}
	num := int32(len(w.parts) + 1)
	out, err := w.fs.client.UploadPart(ctx(), &s3.UploadPartInput{
		Bucket: &w.fs.bucket, Key: &w.key, UploadId: w.uploadID, PartNumber: aws.Int32(num),
		Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))),
	})
	if err != nil {
		return w.fs.pathErr(fmt.Sprintf("upload part %d", num), w.name, err)
	}
	w.parts = append(w.parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(num)})
	return nil
}

// fail records err as the upload's end and aborts a multipart upload.
func (w *writer) fail(err error) {
	w.done, w.err = true, err
	if w.uploadID != nil {
		_, _ = w.fs.client.AbortMultipartUpload(ctx(), &s3.AbortMultipartUploadInput{Bucket: &w.fs.bucket, Key: &w.key, UploadId: w.uploadID})
	}
}

// Sync implements vfs.WritableFile: it uploads the object (once); the
// data is durable when it returns nil. Writes after it fail.
func (w *writer) Sync() error {
	if w.done {
		return w.err
	}
	if w.uploadID == nil {
		w.done = true
		w.err = w.fs.PutIfAbsent(w.name, w.buf.Bytes())
		w.buf = bytes.Buffer{}
		return w.err
	}
	if err := w.uploadPart(w.buf.Bytes()); err != nil {
		w.fail(err)
		return err
	}
	w.buf = bytes.Buffer{}
	_, err := w.fs.client.CompleteMultipartUpload(ctx(), &s3.CompleteMultipartUploadInput{
		Bucket: &w.fs.bucket, Key: &w.key, UploadId: w.uploadID, IfNoneMatch: aws.String("*"),
		MultipartUpload: &types.CompletedMultipartUpload{Parts: w.parts},
	})
	if err != nil {
		w.fail(w.fs.pathErr("complete multipart upload", w.name, err))
		return w.err
	}
	w.done = true
	return nil
}

// Close implements io.Closer: it uploads the object unless Sync did.
func (w *writer) Close() error { return w.Sync() }
