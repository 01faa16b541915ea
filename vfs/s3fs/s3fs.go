// Package s3fs is vfs.FS and vfs.ObjectStore over an S3-compatible object
// store (aws-sdk-go-v2).
//
// Names are object keys in one bucket, slash-separated; a leading slash is
// ignored. A "directory" is a key prefix: it exists while some object is
// under it. What an object store cannot honour is done as follows:
//
//   - PutIfAbsent is one PutObject with If-None-Match: *; a 412 (or 409
//     ConditionalRequestConflict) wraps fs.ErrExist, so a commit that
//     loses the race takes the same conflict path as on local disk.
//   - Create checks that the name is free (HEAD) and buffers; Sync (or
//     Close) uploads with If-None-Match: *, as multipart above PartSize.
//     CreateFresh (vfs.FreshCreator, for random data file names) skips
//     the HEAD: the upload's condition still refuses an existing name.
//     Data is durable once Sync or Close returns nil.
//   - Open is one HEAD (for the size); ReadAt is one ranged GET of exactly
//     the bytes asked for. ReadWhole (vfs.ReadObject, vfs.ReadFile) is one
//     GET of the whole object.
//   - ReadDir and List are ListObjectsV2 with delimiter "/", paginated:
//     objects and sub-prefixes directly under dir. Nothing under dir is
//     fs.ErrNotExist (an object store has no empty directories).
//     ListFirst (vfs.FirstLister) is one ListObjectsV2 with max-keys: the
//     smallest keys first, so Lance finds the newest V2 manifest in one
//     request.
//   - Remove and Delete are HEAD + DeleteObject: a missing object wraps
//     fs.ErrNotExist. Removing a prefix that still has objects fails;
//     removing an empty one is fs.ErrNotExist.
//   - Link is read + PutIfAbsent (a copy, not a shared file); Rename is
//     read + Put + Delete and is not atomic. The table commit path uses
//     neither on an ObjectStore.
//   - MkdirAll and SyncDir do nothing: prefixes need no creation, and a
//     completed PUT is durable.
package s3fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/mvd-project/mvd/vfs"
)

// PartSize is the multipart part size: a file written through Create
// larger than this is uploaded in parts of this size.
const PartSize = 16 << 20

// FS is one bucket of an S3-compatible store. It is safe for concurrent
// use.
type FS struct {
	client   *s3.Client
	bucket   string
	partSize int
}

var (
	_ vfs.FS            = (*FS)(nil)
	_ vfs.ObjectStore   = (*FS)(nil)
	_ vfs.TreeSizer     = (*FS)(nil)
	_ vfs.FirstLister   = (*FS)(nil)
	_ vfs.WholeReader   = (*FS)(nil)
	_ vfs.SizedOpener   = (*FS)(nil)
	_ vfs.ObjectStatter = (*FS)(nil)
)

// New returns the FS of bucket with the settings o. It makes no request.
func New(ctx context.Context, bucket string, o Options) (*FS, error) {
	c, err := o.client(ctx)
	if err != nil {
		return nil, fmt.Errorf("s3://%s: %w", bucket, err)
	}
	return &FS{client: c, bucket: bucket, partSize: PartSize}, nil
}

// SetPartSize sets the multipart part size of the files Create writes
// (PartSize by default; S3 itself wants at least 5 MiB but for the last
// part). Tests set a small one to make a large upload out of a small
// file. Call it before the FS is used.
func (f *FS) SetPartSize(n int) { f.partSize = max(n, 1) }

// Bucket returns the bucket's name.
func (f *FS) Bucket() string { return f.bucket }

// key maps an FS name to an object key.
func key(name string) string {
	k := strings.TrimLeft(path.Clean("/"+name), "/")
	return k
}

func (f *FS) pathErr(op, name string, err error) error {
	switch {
	case isStatus(err, http.StatusNotFound, "NotFound", "NoSuchKey"):
		err = fmt.Errorf("%w (%v)", fs.ErrNotExist, err)
	case isStatus(err, http.StatusPreconditionFailed, "PreconditionFailed"),
		isStatus(err, http.StatusConflict, "ConditionalRequestConflict"):
		err = fmt.Errorf("%w (%v)", fs.ErrExist, err)
	}
	return &fs.PathError{Op: op, Path: "s3://" + f.bucket + "/" + key(name), Err: err}
}

// isStatus reports whether err is an S3 response with the HTTP status or
// one of the error codes.
func isStatus(err error, status int, codes ...string) bool {
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() == status {
		return true
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		for _, c := range codes {
			if ae.ErrorCode() == c {
				return true
			}
		}
	}
	return false
}

func ctx() context.Context { return context.Background() }

// PutIfAbsent implements vfs.ObjectStore: PutObject with If-None-Match: *.
func (f *FS) PutIfAbsent(name string, data []byte) error {
	_, err := f.client.PutObject(ctx(), &s3.PutObjectInput{
		Bucket: &f.bucket, Key: aws.String(key(name)), Body: bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))), IfNoneMatch: aws.String("*"),
	})
	if err != nil {
		return f.pathErr("put", name, err)
	}
	return nil
}

// Put implements vfs.ObjectStore: a plain PutObject.
func (f *FS) Put(name string, data []byte) error {
	_, err := f.client.PutObject(ctx(), &s3.PutObjectInput{
		Bucket: &f.bucket, Key: aws.String(key(name)), Body: bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	})
	if err != nil {
		return f.pathErr("put", name, err)
	}
	return nil
}

// Open implements vfs.FS and vfs.ObjectStore: HEAD for the size.
func (f *FS) Open(name string) (vfs.File, error) {
	k := key(name)
	if k == "" {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("the bucket's root is a directory")}
	}
	h, err := f.client.HeadObject(ctx(), &s3.HeadObjectInput{Bucket: &f.bucket, Key: &k})
	if err != nil {
		return nil, f.pathErr("open", name, err)
	}
	return &reader{fs: f, name: name, key: k, size: aws.ToInt64(h.ContentLength)}, nil
}

// OpenSized implements vfs.SizedOpener: no request until the first
// ReadAt; a missing object fails it with fs.ErrNotExist.
func (f *FS) OpenSized(name string, size int64) (vfs.File, error) {
	k := key(name)
	if k == "" {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("the bucket's root is a directory")}
	}
	return &reader{fs: f, name: name, key: k, size: size}, nil
}

// ReadWhole implements vfs.WholeReader: one GET of the whole object, no
// HEAD first.
func (f *FS) ReadWhole(name string) ([]byte, error) {
	k := key(name)
	if k == "" {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("the bucket's root is a directory")}
	}
	out, err := f.client.GetObject(ctx(), &s3.GetObjectInput{Bucket: &f.bucket, Key: &k})
	if err != nil {
		return nil, f.pathErr("read", name, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, f.pathErr("read", name, err)
	}
	return b, nil
}

// List implements vfs.ObjectStore (see ReadDir).
func (f *FS) List(dir string) ([]string, error) { return f.ReadDir(dir) }

// ReadDir implements vfs.FS: the objects and sub-prefixes directly under
// dir, from a paginated ListObjectsV2 with delimiter "/".
func (f *FS) ReadDir(dir string) ([]string, error) {
	prefix := key(dir)
	if prefix != "" {
		prefix += "/"
	}
	p := s3.NewListObjectsV2Paginator(f.client, &s3.ListObjectsV2Input{
		Bucket: &f.bucket, Prefix: &prefix, Delimiter: aws.String("/"),
	})
	var names []string
	for p.HasMorePages() {
		page, err := p.NextPage(ctx())
		if err != nil {
			return nil, f.pathErr("list", dir, err)
		}
		for _, o := range page.Contents {
			if n := strings.TrimPrefix(aws.ToString(o.Key), prefix); n != "" {
				names = append(names, n)
			}
		}
		for _, cp := range page.CommonPrefixes {
			if n := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(cp.Prefix), prefix), "/"); n != "" {
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 && prefix != "" {
		return nil, &fs.PathError{Op: "list", Path: "s3://" + f.bucket + "/" + prefix, Err: fs.ErrNotExist}
	}
	return names, nil
}

// ListFirst implements vfs.FirstLister: one ListObjectsV2 with delimiter
// "/" and max-keys n. Only objects are returned, not sub-prefixes.
func (f *FS) ListFirst(dir string, n int) ([]fs.FileInfo, bool, error) {
	prefix := key(dir)
	if prefix != "" {
		prefix += "/"
	}
	out, err := f.client.ListObjectsV2(ctx(), &s3.ListObjectsV2Input{
		Bucket: &f.bucket, Prefix: &prefix, Delimiter: aws.String("/"), MaxKeys: aws.Int32(int32(max(n, 1))),
	})
	if err != nil {
		return nil, false, f.pathErr("list", dir, err)
	}
	objs := make([]fs.FileInfo, 0, len(out.Contents))
	for _, o := range out.Contents {
		if name := strings.TrimPrefix(aws.ToString(o.Key), prefix); name != "" {
			objs = append(objs, info{name: name, size: aws.ToInt64(o.Size), mtime: mtime(o.LastModified)})
		}
	}
	more := aws.ToBool(out.IsTruncated)
	if len(objs) == 0 && len(out.CommonPrefixes) == 0 && !more {
		return nil, false, &fs.PathError{Op: "list", Path: "s3://" + f.bucket + "/" + prefix, Err: fs.ErrNotExist}
	}
	return objs, more, nil
}

// mtime is an object's LastModified at the precision HEAD reports it (a
// second), so that a listing and a HEAD of one object agree on it.
func mtime(t *time.Time) time.Time { return aws.ToTime(t).Truncate(time.Second) }

// TreeBytes implements vfs.TreeSizer: the sizes of every object under
// dir, from a paginated ListObjectsV2 without delimiter.
func (f *FS) TreeBytes(dir string) (int64, error) {
	prefix := key(dir)
	if prefix != "" {
		prefix += "/"
	}
	p := s3.NewListObjectsV2Paginator(f.client, &s3.ListObjectsV2Input{Bucket: &f.bucket, Prefix: &prefix})
	var total int64
	n := 0
	for p.HasMorePages() {
		page, err := p.NextPage(ctx())
		if err != nil {
			return 0, f.pathErr("list", dir, err)
		}
		for _, o := range page.Contents {
			total += aws.ToInt64(o.Size)
			n++
		}
	}
	if n == 0 {
		return 0, &fs.PathError{Op: "list", Path: "s3://" + f.bucket + "/" + prefix, Err: fs.ErrNotExist}
	}
	return total, nil
}

// hasChildren reports whether some object's key starts with dir + "/".
func (f *FS) hasChildren(dir string) (bool, error) {
	prefix := key(dir)
	if prefix == "" {
		return true, nil
	}
	prefix += "/"
	out, err := f.client.ListObjectsV2(ctx(), &s3.ListObjectsV2Input{Bucket: &f.bucket, Prefix: &prefix, MaxKeys: aws.Int32(1)})
	if err != nil {
		return false, f.pathErr("list", dir, err)
	}
	return len(out.Contents) > 0, nil
}

// StatObject implements vfs.ObjectStatter: one HEAD.
func (f *FS) StatObject(name string) (fs.FileInfo, error) {
	k := key(name)
	if k == "" {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fmt.Errorf("the bucket's root is a directory")}
	}
	h, err := f.client.HeadObject(ctx(), &s3.HeadObjectInput{Bucket: &f.bucket, Key: &k})
	if err != nil {
		return nil, f.pathErr("stat", name, err)
	}
	return info{name: path.Base(k), size: aws.ToInt64(h.ContentLength), mtime: mtime(h.LastModified)}, nil
}

// Stat implements vfs.FS: HEAD of the object, else a directory if some
// object is under name + "/". A directory's ModTime is zero.
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	k := key(name)
	if k != "" {
		st, err := f.StatObject(name)
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			return st, err
		}
	}
	ok, err := f.hasChildren(name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &fs.PathError{Op: "stat", Path: "s3://" + f.bucket + "/" + k, Err: fs.ErrNotExist}
	}
	return info{name: path.Base("/" + k), dir: true}, nil
}

// Delete implements vfs.ObjectStore (see Remove).
func (f *FS) Delete(name string) error { return f.Remove(name) }

// Remove implements vfs.FS: HEAD (a missing object wraps fs.ErrNotExist)
// then DeleteObject. A prefix with objects under it is not removed.
func (f *FS) Remove(name string) error {
	k := key(name)
	_, err := f.client.HeadObject(ctx(), &s3.HeadObjectInput{Bucket: &f.bucket, Key: &k})
	if err != nil {
		if !isStatus(err, http.StatusNotFound, "NotFound", "NoSuchKey") {
			return f.pathErr("remove", name, err)
		}
		if full, lerr := f.hasChildren(name); lerr == nil && full {
			return &fs.PathError{Op: "remove", Path: "s3://" + f.bucket + "/" + k, Err: errors.New("directory not empty")}
		}
		return f.pathErr("remove", name, err)
	}
	if _, err := f.client.DeleteObject(ctx(), &s3.DeleteObjectInput{Bucket: &f.bucket, Key: &k}); err != nil {
		return f.pathErr("remove", name, err)
	}
	return nil
}

// Link implements vfs.FS as a copy: newname gets oldname's bytes, with
// PutIfAbsent (fs.ErrExist if newname exists).
func (f *FS) Link(oldname, newname string) error {
	data, err := vfs.ReadFile(f, oldname)
	if err != nil {
		return fmt.Errorf("link %s: %w", newname, err)
	}
	return f.PutIfAbsent(newname, data)
}

// Rename implements vfs.FS as copy + delete; unlike on a local disk it is
// not atomic.
func (f *FS) Rename(oldname, newname string) error {
	data, err := vfs.ReadFile(f, oldname)
	if err != nil {
		return fmt.Errorf("rename %s: %w", oldname, err)
	}
	if err := f.Put(newname, data); err != nil {
		return err
	}
	return f.Remove(oldname)
}

// PrefixDirs implements vfs.PrefixDirs: a directory is a key prefix.
func (f *FS) PrefixDirs() bool { return true }

// MkdirAll implements vfs.FS: prefixes need no creation.
func (f *FS) MkdirAll(string) error { return nil }

// SyncDir implements vfs.FS: a completed PUT is durable already.
func (f *FS) SyncDir(string) error { return nil }

type info struct {
	name  string
	size  int64
	mtime time.Time
	dir   bool
}

func (i info) Name() string       { return i.name }
func (i info) Size() int64        { return i.size }
func (i info) ModTime() time.Time { return i.mtime }
func (i info) IsDir() bool        { return i.dir }
func (i info) Sys() any           { return nil }
func (i info) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}

// reader is an open object: every ReadAt is one ranged GET.
type reader struct {
	fs     *FS
	name   string
	key    string
	size   int64
	closed atomic.Bool
}

func (r *reader) Size() int64 { return r.size }

// Close implements io.Closer; reads after it fail with fs.ErrClosed.
func (r *reader) Close() error { r.closed.Store(true); return nil }

// ReadAt implements io.ReaderAt with one ranged GET of exactly the bytes
// asked for (fewer, with io.EOF, at the end of the object).
func (r *reader) ReadAt(p []byte, off int64) (int, error) {
	if r.closed.Load() {
		return 0, &fs.PathError{Op: "read", Path: r.name, Err: fs.ErrClosed}
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "read", Path: r.name, Err: fs.ErrInvalid}
	}
	if off >= r.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := int64(len(p))
	if n == 0 {
		return 0, nil
	}
	end := min(off+n, r.size)
	out, err := r.fs.client.GetObject(ctx(), &s3.GetObjectInput{
		Bucket: &r.fs.bucket, Key: &r.key, Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, end-1)),
	})
	if err != nil {
		return 0, r.fs.pathErr("read", r.name, err)
	}
	defer out.Body.Close()
	got, err := io.ReadFull(out.Body, p[:end-off])
	if err != nil {
		return got, r.fs.pathErr("read", r.name, err)
	}
	if end < off+n {
		return got, io.EOF
	}
	return got, nil
}
